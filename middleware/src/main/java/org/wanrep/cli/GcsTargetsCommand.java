package org.wanrep.cli;

import org.wanrep.gcs.Delivery;
import org.wanrep.gcs.bench.GcsBench;
import org.wanrep.gcs.wan.LatencyMatrix;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

@Command(name = "gcs-targets", mixinStandardHelpOptions = true,
        description = {"Runs gcs-bench in every configuration that issue #2 sets a target for and checks each target:",
                "low load (50 msgs/s, 1 KB) on na4 and global5 for agreed, safe and opt-safe:",
                "  origin_p50 <= 1.15 x bound_origin + 10 ms; opt-safe: opt_p50 <= largest one-way delay from the sender + 10 ms;",
                "no delay, 4 sites, 1 KB: agreed >= 10,000 msgs/s and safe >= 5,000 msgs/s sustained.",
                "--encryption on: the members encrypt and authenticate their traffic as sites with gcs.secret_file do;",
                "compare: each configuration runs in clear text and encrypted, the targets are checked on the encrypted runs",
                "and the cost of encryption (encrypted / clear) is reported and written to encryption-cost.csv.",
                "Writes results.json and results.csv to --out; exits 1 if a target is missed."})
public final class GcsTargetsCommand implements Callable<Integer> {
    @Option(names = "--messages", defaultValue = "600", description = "measured messages per low-load run (default: ${DEFAULT-VALUE})")
    int messages;

    @Option(names = "--throughput-messages", defaultValue = "60000", description = "messages per throughput run (default: ${DEFAULT-VALUE})")
    int tputMessages;

    @Option(names = "--out", defaultValue = "runs/gcs-targets", description = "output directory (default: ${DEFAULT-VALUE})")
    Path out;

    @Option(names = "--encryption", defaultValue = "off", description = "off, on, or compare (both, with the cost of encryption) (default: ${DEFAULT-VALUE})")
    String encryption;

    private Path secret;
    private final List<String[]> costs = new ArrayList<>();

    private record Row(String config, GcsBench.Result r, String target, double limit, double measured, boolean pass) {}

    @Override public Integer call() throws Exception {
        if (!List.of("off", "on", "compare").contains(encryption)) throw new picocli.CommandLine.ParameterException(
                new picocli.CommandLine(this), "--encryption must be off, on or compare, not '" + encryption + "'");
        Path keyDir = null;
        if (!encryption.equals("off")) {
            keyDir = Files.createTempDirectory("wanrep-gcs-targets");
            secret = org.wanrep.gcs.jgroups.GcsSecret.generate(keyDir.resolve("gcs.secret"));
        }
        try {
            return measure();
        } finally {
            if (keyDir != null) {
                Files.deleteIfExists(secret);
                Files.deleteIfExists(keyDir);
            }
        }
    }

    private int measure() throws Exception {
        List<Row> rows = new ArrayList<>();
        for (String mx : List.of("na4", "global5")) {
            LatencyMatrix m = LatencyMatrix.load(mx);
            for (Delivery d : List.of(Delivery.AGREED, Delivery.SAFE, Delivery.OPT_SAFE)) {
                GcsBench.Result r = run(m, d, 50, messages);
                double lim = 1.15 * r.boundOrigin() + 10;
                rows.add(new Row(mx + " " + d.label(), r, "origin_p50 <= 1.15 x bound + 10", lim, r.originP50(), r.originP50() <= lim));
                if (d == Delivery.OPT_SAFE) {
                    double ol = r.boundOpt() + 10;
                    rows.add(new Row(mx + " " + d.label(), r, "opt_p50 <= max one-way + 10", ol, r.optP50(), r.optP50() <= ol));
                }
            }
        }
        List<String> four = List.of("site1", "site2", "site3", "site4");
        GcsBench.Result a = run(LatencyMatrix.zero(four), Delivery.AGREED, 12_000, tputMessages);
        rows.add(new Row("no delay agreed", a, "throughput >= 10000 msgs/s", 10_000, a.throughput(), a.throughput() >= 10_000));
        GcsBench.Result s = run(LatencyMatrix.zero(four), Delivery.SAFE, 12_000, tputMessages);
        rows.add(new Row("no delay safe", s, "throughput >= 5000 msgs/s", 5_000, s.throughput(), s.throughput() >= 5_000));

        StringBuilder table = new StringBuilder(String.format(Locale.ROOT, "%n%-18s %-34s %10s %10s %6s%n", "configuration", "target", "limit", "measured", "verdict"));
        StringBuilder csv = new StringBuilder("configuration,target,limit,measured,pass\n");
        StringBuilder json = new StringBuilder("[\n");
        boolean all = true;
        for (Row r : rows) {
            all &= r.pass();
            table.append(String.format(Locale.ROOT, "%-18s %-34s %10.2f %10.2f %6s%n", r.config(), r.target(), r.limit(), r.measured(), r.pass() ? "PASS" : "FAIL"));
            csv.append(String.format(Locale.ROOT, "%s,%s,%.2f,%.2f,%s%n", r.config(), r.target(), r.limit(), r.measured(), r.pass()));
            json.append(String.format(Locale.ROOT, "  {\"configuration\":\"%s\",\"target\":\"%s\",\"limit\":%.2f,\"measured\":%.2f,\"pass\":%s,\"result\":%s},%n",
                    r.config(), r.target(), r.limit(), r.measured(), r.pass(), r.r().toJson()));
        }
        json.setLength(json.length() - 2);
        json.append("\n]\n");
        Files.createDirectories(out);
        Files.writeString(out.resolve("results.csv"), csv);
        Files.writeString(out.resolve("results.json"), json);
        System.out.print(table);
        if (!costs.isEmpty()) {
            StringBuilder ct = new StringBuilder(String.format(Locale.ROOT, "%ncost of encryption (targets above checked on the encrypted runs)%n%-32s %-20s %10s %10s %8s%n",
                    "configuration", "metric", "clear", "encrypted", "ratio"));
            StringBuilder cc = new StringBuilder("configuration,metric,clear,encrypted,ratio\n");
            for (String[] c : costs) {
                ct.append(String.format(Locale.ROOT, "%-32s %-20s %10s %10s %8s%n", (Object[]) c));
                cc.append(String.join(",", c)).append('\n');
            }
            Files.writeString(out.resolve("encryption-cost.csv"), cc);
            System.out.print(ct);
        }
        System.out.println("results in " + out.toAbsolutePath());
        return all ? 0 : 1;
    }

    /** The run the targets are checked on (encrypted unless --encryption off); with compare, a clear run first and the cost. */
    private GcsBench.Result run(LatencyMatrix m, Delivery d, double rate, int n) throws Exception {
        if (!encryption.equals("compare")) return run(m, d, rate, n, encryption.equals("on") ? secret : null);
        GcsBench.Result clear = run(m, d, rate, n, null), enc = run(m, d, rate, n, secret);
        String config = m.source() + " " + d.label() + " " + (int) rate + "/s";
        cost(config, "origin_p50_ms", clear.originP50(), enc.originP50());
        cost(config, "all_p99_ms", clear.allP99(), enc.allP99());
        cost(config, "throughput_msgs_s", clear.throughput(), enc.throughput());
        return enc;
    }

    private void cost(String config, String metric, double clear, double enc) {
        costs.add(new String[]{config, metric, String.format(Locale.ROOT, "%.2f", clear), String.format(Locale.ROOT, "%.2f", enc),
                String.format(Locale.ROOT, "%.3f", enc / clear)});
    }

    private GcsBench.Result run(LatencyMatrix m, Delivery d, double rate, int n, Path key) throws Exception {
        System.out.printf("%n== %s, %s, %.0f msgs/s, %d messages%s%n", m.source(), d.label(), rate, n, key != null ? ", encrypted" : "");
        GcsBench.Params p = new GcsBench.Params(m, d, null, rate, n, 1024, Math.max(20, n / 10), 0,
                Duration.ofSeconds(120 + (long) (n / rate) * 2));
        GcsBench.Result r = new GcsBench(p, System.out, key).run();
        System.out.print(GcsBench.table(List.of(r)));
        return r;
    }
}
