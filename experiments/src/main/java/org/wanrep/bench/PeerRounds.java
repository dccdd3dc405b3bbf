package org.wanrep.bench;

import org.wanrep.bench.PeerBench.Run;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * peer-bench's systems measured in several rounds, alternated (direct, then each system, then direct again...): on a
 * shared machine whose speed drifts over minutes, one system measured after another can be measured on another machine,
 * in effect. A system's ratio is taken per round, against that round's direct run, and the rounds are combined by
 * their median ratio. Pure: the runs in, the combined runs and the reports out.
 */
final class PeerRounds {
    private PeerRounds() {}

    /**
     * One run per system of one workload's rounds ({@code rounds}: each round's runs, direct among them): its ratio
     * (tps over the combined direct run's) is the median of its rounds' ratios, direct's tps the median of its rounds';
     * CPU figures are the rounds' medians, failures and transactions their sums, notes joined.
     */
    static List<Run> combine(List<List<Run>> rounds) {
        if (rounds.size() == 1) return rounds.get(0);
        double directTps = median(rounds, "direct", Run::tps);
        List<Run> out = new ArrayList<>();
        for (Run first : rounds.get(0)) {
            String s = first.system();
            List<Run> each = of(rounds, s);
            double tps = s.equals("direct") ? directTps : directTps * medianRatio(rounds, s);
            long failed = 0, transactions = 0;
            List<String> notes = new ArrayList<>();
            for (Run r : each) {
                failed += r.failed();
                transactions += r.transactions();
                if (!r.note().isEmpty()) notes.add(r.note());
            }
            out.add(new Run(first.workload(), s, tps, failed, String.join("; ", notes), transactions, median(each, Run::cpuMicrosPerTxn),
                    median(each, Run::switchesPerTxn), median(each, Run::serversMicrosPerTxn), median(each, Run::middlewareMicrosPerTxn)));
        }
        return out;
    }

    /** {@code system}'s tps over direct's in {@code round}. */
    static double ratio(List<Run> round, String system) {
        return tps(round, system) / tps(round, "direct");
    }

    /** The median over the rounds of {@code system}'s ratio. */
    static double medianRatio(List<List<Run>> rounds, String system) {
        List<Double> xs = new ArrayList<>();
        for (List<Run> round : rounds) xs.add(ratio(round, system));
        return median(xs);
    }

    /** Per round: direct's tps, then each system's tps and ratio; and their medians. */
    static String table(String workload, List<List<Run>> rounds) {
        List<String> systems = rounds.get(0).stream().map(Run::system).filter(s -> !s.equals("direct")).toList();
        StringBuilder b = new StringBuilder(workload + ", " + rounds.size() + " rounds, alternated\n");
        b.append(String.format("%-12s %8s", "round", "direct"));
        for (String s : systems) b.append(String.format(" %10s %6s", s, "ratio"));
        b.append('\n');
        for (int i = 0; i < rounds.size(); i++) {
            b.append(String.format("%-12d %8.0f", i + 1, tps(rounds.get(i), "direct")));
            for (String s : systems) b.append(String.format(" %10.0f %6.3f", tps(rounds.get(i), s), ratio(rounds.get(i), s)));
            b.append('\n');
        }
        b.append(String.format("%-12s %8.0f", "median", median(rounds, "direct", Run::tps)));
        for (String s : systems) b.append(String.format(" %10s %6.3f", "", medianRatio(rounds, s)));
        return b.append('\n').toString();
    }

    /** The rounds for results.json: per round, each system's tps and ratio. */
    static List<Map<String, Object>> json(List<List<Run>> rounds) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (int i = 0; i < rounds.size(); i++) {
            Map<String, Object> round = new LinkedHashMap<>();
            round.put("round", i + 1);
            for (Run r : rounds.get(i)) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("tps", Math.round(r.tps()));
                m.put("ratio", Math.round(ratio(rounds.get(i), r.system()) * 1000) / 1000.0);
                m.put("failed", r.failed());
                m.put("cpu_us_per_txn", Math.round(r.cpuMicrosPerTxn()));
                m.put("servers_cpu_us_per_txn", Math.round(r.serversMicrosPerTxn()));
                m.put("middleware_cpu_us_per_txn", Math.round(r.middlewareMicrosPerTxn()));
                round.put(r.system(), m);
            }
            out.add(round);
        }
        return out;
    }

    private static double tps(List<Run> round, String system) {
        return round.stream().filter(r -> r.system().equals(system)).mapToDouble(Run::tps).findFirst().orElse(Double.NaN);
    }

    private static List<Run> of(List<List<Run>> rounds, String system) {
        List<Run> out = new ArrayList<>();
        for (List<Run> round : rounds) for (Run r : round) if (r.system().equals(system)) out.add(r);
        return out;
    }

    private static double median(List<List<Run>> rounds, String system, ToDoubleFunction<Run> f) { return median(of(rounds, system), f); }

    private static double median(List<Run> runs, ToDoubleFunction<Run> f) {
        List<Double> xs = new ArrayList<>();
        for (Run r : runs) xs.add(f.applyAsDouble(r));
        return median(xs);
    }

    /** The middle value; of an even count, the mean of the two middle ones. */
    static double median(List<Double> xs) {
        List<Double> s = new ArrayList<>(xs);
        s.sort(null);
        int n = s.size();
        return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
    }
}
