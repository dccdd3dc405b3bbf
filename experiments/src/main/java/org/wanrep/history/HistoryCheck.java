package org.wanrep.history;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import org.wanrep.checker.CheckResult;
import org.wanrep.checker.Event;
import org.wanrep.checker.History;
import org.wanrep.checker.ListAppendChecker;
import org.wanrep.checker.MicroOp;
import org.wanrep.checker.OpType;
import org.wanrep.checker.Txn;
import org.wanrep.cluster.ClusterLayout;
import org.wanrep.cluster.LocalCluster;
import org.wanrep.config.Config;
import org.wanrep.pg.TableDigest;
import org.wanrep.plot.TimelineChart;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code wanrep history-check}: a local cluster, the list-append workload from clients at every site, faults on a
 * seeded schedule, then final reads at every serving replica and the checker. Writes history.jsonl, anomalies.json,
 * report.md and timeline.png into the output directory; the summary is one JSON object.
 */
public final class HistoryCheck {
    /** What to run. */
    public record Settings(int sites, String matrix, String delivery, String execution, String faults, int seconds,
                           int clientsPerSite, long seed, Path out, int keys, boolean realtime, List<String> overrides) {}

    /** The verdict: the summary printed as the last line. */
    public record Summary(long transactions, long ok, long failed, long unknown, long lost, long divergent, long anomalies,
                          int faults_injected, Map<String, Long> anomaly_types, List<String> serving, List<String> faults_not_available,
                          long seed, String delivery, String execution, String faults, String out) {
        public boolean passed() { return lost == 0 && divergent == 0 && anomalies == 0; }
    }

    private static final ObjectMapper JSON = new ObjectMapper();
    /** Process ids of the final reads, apart from the clients'. */
    static final int FINAL_PROCESS = 1_000_000;

    private HistoryCheck() {}

    public static Summary run(Settings s, PrintStream out) throws Exception {
        List<Faults.Kind> kinds = Faults.parse(s.faults());
        if (s.sites() < 1) throw new IllegalArgumentException("--sites must be at least 1");
        if (s.seconds() < 5) throw new IllegalArgumentException("--seconds must be at least 5");
        Path outDir = s.out().toAbsolutePath();
        Files.createDirectories(outDir);
        Path clusterDir = outDir.resolve("cluster");
        // fault injection lets the runner isolate a site inside its JGroups stack (partition)
        List<String> overrides = new ArrayList<>(List.of("delivery=" + s.delivery(), "execution=" + s.execution(), "testing.fault_injection=on"));
        overrides.addAll(s.overrides());
        Config cfg = Config.build(Map.of(), overrides);
        out.printf("history-check: seed %d, %d sites on %s, delivery %s, execution %s, faults %s, %d s, %d clients per site%n",
                s.seed(), s.sites(), s.matrix(), s.delivery(), s.execution(), s.faults(), s.seconds(), s.clientsPerSite());
        ClusterLayout layout = LocalCluster.up(clusterDir, s.sites(), s.matrix(), cfg, out);
        Faults faults = null;
        try {
            List<ClusterLayout.SiteEntry> sites = layout.sites();
            try (Connection c = ListAppendClient.connect(url(sites.getFirst()), 60); Statement st = c.createStatement()) {
                for (String ddl : ListAppendClient.tableDdl()) st.execute(ddl);
            }
            // a DDL at every other site returns once that site committed the CREATE (DDL takes every table's lock)
            for (ClusterLayout.SiteEntry e : sites.subList(1, sites.size()))
                try (Connection c = ListAppendClient.connect(url(e), 60); Statement st = c.createStatement()) {
                    st.execute("COMMENT ON TABLE la0 IS 'wanrep history-check'");
                }

            History history = new History();
            KeySpace keys = new KeySpace(s.keys(), 48);
            AtomicLong txnIds = new AtomicLong();
            AtomicInteger processes = new AtomicInteger();
            long t0 = System.nanoTime();
            long deadline = t0 + s.seconds() * 1_000_000_000L;
            int socketTimeout = 20;
            List<Thread> clients = new ArrayList<>();
            for (int i = 0; i < sites.size(); i++)
                for (int c = 0; c < s.clientsPerSite(); c++) {
                    ClusterLayout.SiteEntry e = sites.get(i);
                    ListAppendClient client = new ListAppendClient(e.name(), e.proxy_host(), e.proxy_port(), keys, history,
                            s.seed() * 1000 + i * 100L + c, t0, deadline, txnIds, processes, socketTimeout);
                    clients.add(Thread.ofPlatform().name("la-" + e.name() + "-" + c).daemon().start(client));
                }
            long warm = Math.max(3_000_000_000L, s.seconds() * 150_000_000L);
            long cool = Math.max(5_000_000_000L, s.seconds() * 150_000_000L);
            faults = new Faults(layout, clusterDir, kinds, s.seed(), t0, t0 + warm, deadline - cool, out);
            faults.notes().forEach(n -> out.println("history-check: " + n));
            Thread faultThread = Thread.ofPlatform().name("faults").daemon().start(faults);

            int seen = 0;
            while (System.nanoTime() < deadline) {
                Thread.sleep(Math.min(5000, Math.max(1, (deadline - System.nanoTime()) / 1_000_000)));
                List<Event> ev = history.events();
                Map<OpType, Integer> byType = new TreeMap<>();
                for (Event e : ev.subList(seen, ev.size())) if (e.type() != OpType.INVOKE) byType.merge(e.type(), 1, Integer::sum);
                seen = ev.size();
                out.printf("history-check: t=%.0fs %d transactions so far; last interval ok %d, fail %d, unknown %d; faults %d%n",
                        (System.nanoTime() - t0) / 1e9, txnIds.get(), byType.getOrDefault(OpType.OK, 0), byType.getOrDefault(OpType.FAIL, 0),
                        byType.getOrDefault(OpType.INFO, 0), faults.injected().size());
            }
            faultThread.interrupt();
            faultThread.join(10_000);
            faults.resumeAll();
            for (Thread t : clients) t.join((socketTimeout + 10) * 1000L);
            for (Thread t : clients) if (t.isAlive()) t.interrupt();   // an unfinished transaction stays unknown

            out.println("history-check: workload done; final reads at every serving replica");
            Thread.sleep(1000);
            List<Long> used = keys.used();
            Map<String, Map<Long, long[]>> finals = new LinkedHashMap<>();
            List<String> serving = new ArrayList<>();
            Map<String, Integer> pgPorts = new HashMap<>();
            int finalProcess = FINAL_PROCESS;
            for (ClusterLayout.SiteEntry e : sites) {
                // a site counted down by the fault schedule may still serve (a partition shorter than the failure
                // detector, healed): it is read if its process lives, and must then agree with the others
                if (faults.dead().contains(e.name()) && !ProcessHandle.of(e.middleware_pid()).map(ProcessHandle::isAlive).orElse(false)) continue;
                long id = txnIds.incrementAndGet();
                List<MicroOp> reads = used.stream().map(MicroOp::read).toList();
                try {
                    Map<Long, long[]> state = finalReadOnceCurrent(e);
                    history.add(new Event(finalProcess, id, OpType.INVOKE, System.nanoTime() - t0, reads, e.name(), null));
                    history.add(new Event(finalProcess, id, OpType.OK, System.nanoTime() - t0,
                            used.stream().map(k -> MicroOp.read(k, state.getOrDefault(k, new long[0]))).toList(), e.name(), null));
                    finals.put(e.name(), state);
                    serving.add(e.name());
                    pgPorts.put(e.name(), e.pg_port());
                } catch (SQLException ex) {
                    out.printf("history-check: site %s does not serve: %s%n", e.name(), ListAppendClient.describe(ex));
                }
                finalProcess++;
            }

            // lost: an acknowledged append missing at some serving replica; divergent: keys whose lists differ
            List<Txn> txns = history.transactions();
            long lost = 0;
            for (Txn t : txns) {
                if (!t.ok() || t.process() >= FINAL_PROCESS) continue;
                for (MicroOp o : t.ops()) {
                    if (!o.isAppend()) continue;
                    for (Map<Long, long[]> st : finals.values()) {
                        long[] l = st.get(o.key());
                        if (l == null || Arrays.stream(l).noneMatch(v -> v == o.value())) { lost++; break; }
                    }
                }
            }
            long divergent = 0;
            List<String> divergence = new ArrayList<>();
            if (finals.size() > 1) {
                Map<Long, long[]> first = finals.values().iterator().next();
                for (long k : used) {
                    for (Map.Entry<String, Map<Long, long[]>> e : finals.entrySet()) {
                        if (!Arrays.equals(first.getOrDefault(k, new long[0]), e.getValue().getOrDefault(k, new long[0]))) {
                            divergent++;
                            divergence.add("key " + k + " differs at " + e.getKey());
                            break;
                        }
                    }
                }
                Map<String, String> digest = digests(sites, serving);
                for (Map.Entry<String, String> d : digest.entrySet())
                    if (!d.getValue().equals("same")) {
                        divergence.add("table " + d.getKey() + ": " + d.getValue());
                        if (divergent == 0) divergent = 1;   // the lists agree but the rows do not
                    }
            }

            out.println("history-check: checking " + txns.size() + " transactions");
            // real-time order only on request: 1-copy-serializability lets a site read before it applied a commit
            // acknowledged at another site, so strict serializability is not promised
            CheckResult result = new ListAppendChecker(ListAppendChecker.Options.defaults().withRealtime(s.realtime())).check(history);
            lost = Math.max(lost, result.lost());

            long ok = 0, failed = 0, unknown = 0, total = 0;
            for (Txn t : txns) {
                if (t.process() >= FINAL_PROCESS) continue;
                total++;
                switch (t.outcome()) {
                    case OK -> ok++;
                    case FAIL -> failed++;
                    default -> unknown++;
                }
            }
            Map<String, Long> types = new TreeMap<>(result.counts());
            types.remove("lost");
            Summary summary = new Summary(total, ok, failed, unknown, lost, divergent, result.anomalyCount(), faults.injected().size(),
                    types, serving, List.of(), s.seed(),
                    s.delivery(), s.execution(), s.faults(), outDir.toString());

            history.save(outDir.resolve("history.jsonl"));
            result.writeJson(outDir.resolve("anomalies.json"));
            Path png = TimelineChart.write(txns, FINAL_PROCESS, faults.injected(), s.seconds(), outDir.resolve("timeline.png"));
            Files.writeString(outDir.resolve("report.md"), report(s, summary, txns, faults, result, divergence, png));
            out.println("history-check: wrote history.jsonl, anomalies.json, report.md, timeline.png in " + outDir);
            return summary;
        } finally {
            if (faults != null) faults.resumeAll();
            try {
                LocalCluster.down(clusterDir, out);
            } catch (IOException e) {
                out.println("history-check: cluster down: " + e.getMessage());
            }
        }
    }

    static String url(ClusterLayout.SiteEntry e) {
        return "jdbc:postgresql://" + e.proxy_host() + ":" + e.proxy_port() + "/postgres";
    }

    /** After a DDL barrier (it commits only once the site committed everything delivered before it), the site's whole table. */
    /**
     * The final read, waiting up to 30 s while the site is alive but not current (57P03): right after a
     * fault it may still be in a view change or renewing its lease. A site that stopped answers nothing.
     */
    private static Map<Long, long[]> finalReadOnceCurrent(ClusterLayout.SiteEntry e) throws SQLException, InterruptedException {
        long end = System.nanoTime() + 30_000_000_000L;
        while (true) {
            try {
                return finalRead(e);
            } catch (SQLException ex) {
                boolean alive = ProcessHandle.of(e.middleware_pid()).map(ProcessHandle::isAlive).orElse(false);
                if (!alive || !"57P03".equals(ex.getSQLState()) || System.nanoTime() > end) throw ex;
                Thread.sleep(500);
            }
        }
    }

    private static Map<Long, long[]> finalRead(ClusterLayout.SiteEntry e) throws SQLException {
        Map<Long, long[]> state = new HashMap<>();
        try (Connection c = ListAppendClient.connect(url(e), 30); Statement st = c.createStatement()) {
            st.execute("COMMENT ON TABLE la0 IS 'wanrep history-check: final read'");
            StringBuilder all = new StringBuilder();
            for (int i = 0; i < ListAppendClient.TABLES; i++) all.append(i == 0 ? "" : " UNION ALL ").append("SELECT k, v FROM la").append(i);
            try (ResultSet rs = st.executeQuery(all.append(" ORDER BY k").toString())) {
                while (rs.next()) state.put((long) rs.getInt(1), ListAppendClient.parse(rs.getString(2)));
            }
        }
        return state;
    }

    /** {@code cluster check}'s comparison, on the serving replicas' PostgreSQL directly. */
    private static Map<String, String> digests(List<ClusterLayout.SiteEntry> sites, List<String> serving) {
        List<String> names = new ArrayList<>();
        List<Map<String, TableDigest.Digest>> ds = new ArrayList<>();
        for (ClusterLayout.SiteEntry e : sites) {
            if (!serving.contains(e.name())) continue;
            Properties p = new Properties();
            p.setProperty("user", "postgres");
            try (Connection c = DriverManager.getConnection("jdbc:postgresql://" + e.pg_host() + ":" + e.pg_port() + "/postgres", p)) {
                ds.add(TableDigest.of(c));
                names.add(e.name());
            } catch (SQLException ex) {
                return Map.of("(digest)", "could not read " + e.name() + ": " + ex.getMessage());
            }
        }
        return TableDigest.compare(names, ds);
    }

    private static String report(Settings s, Summary sum, List<Txn> txns, Faults faults, CheckResult result, List<String> divergence, Path png) {
        StringBuilder b = new StringBuilder("# history-check\n\n");
        b.append(sum.passed() ? "**PASSED**" : "**FAILED**").append(": ").append(sum.transactions()).append(" transactions, lost ")
                .append(sum.lost()).append(", divergent ").append(sum.divergent()).append(", anomalies ").append(sum.anomalies()).append(".\n\n");
        b.append("| setting | value |\n|---|---|\n");
        b.append("| sites | ").append(s.sites()).append(" |\n| latency matrix | ").append(s.matrix()).append(" |\n| delivery | ").append(s.delivery())
                .append(" |\n| execution | ").append(s.execution()).append(" |\n| faults | ").append(s.faults()).append(" |\n| seconds | ")
                .append(s.seconds()).append(" |\n| real-time order checked | ").append(s.realtime()).append(" |\n| clients per site | ").append(s.clientsPerSite()).append(" |\n| seed | ").append(s.seed())
                .append(" |\n| serving replicas at the end | ").append(String.join(", ", sum.serving())).append(" |\n\n");
        b.append("Rerun: `./wanrep history-check --sites ").append(s.sites()).append(" --latency-matrix ").append(s.matrix())
                .append(" --delivery ").append(s.delivery()).append(" --execution ").append(s.execution()).append(" --faults ").append(s.faults())
                .append(" --seconds ").append(s.seconds()).append(s.realtime() ? " --realtime" : "").append(" --keys ").append(s.keys()).append(" --clients-per-site ").append(s.clientsPerSite()).append(" --seed ").append(s.seed())
                .append("` (the fault schedule and the transactions' shapes follow the seed; timing does not).\n\n");

        b.append("## Outcomes per site\n\n| site | transactions | ok | failed | unknown |\n|---|---:|---:|---:|---:|\n");
        Map<String, long[]> per = new TreeMap<>();
        Map<String, Integer> errors = new TreeMap<>();
        for (Txn t : txns) {
            if (t.process() >= FINAL_PROCESS) continue;
            long[] c = per.computeIfAbsent(String.valueOf(t.node()), k -> new long[6]);
            c[0]++;
            c[t.ok() ? 1 : t.outcome() == OpType.FAIL ? 2 : 3]++;
            if (t.error() != null) errors.merge(t.outcome().json() + ": " + t.error().replaceAll("\\d+", "N"), 1, Integer::sum);
        }
        per.forEach((site, c) -> b.append("| ").append(site).append(" | ").append(c[0]).append(" | ").append(c[1]).append(" | ")
                .append(c[2]).append(" | ").append(c[3]).append(" |\n"));
        b.append("| all | ").append(sum.transactions()).append(" | ").append(sum.ok()).append(" | ").append(sum.failed()).append(" | ")
                .append(sum.unknown()).append(" |\n\n");
        if (!errors.isEmpty()) {
            b.append("Why transactions failed or ended unknown (numbers replaced by N):\n\n| outcome: error | count |\n|---|---:|\n");
            errors.entrySet().stream().sorted((x, y) -> Integer.compare(y.getValue(), x.getValue())).limit(15)
                    .forEach(e -> b.append("| ").append(e.getKey().replace("|", "\\|")).append(" | ").append(e.getValue()).append(" |\n"));
            b.append('\n');
        }

        b.append("## Faults\n\n");
        if (faults.injected().isEmpty()) b.append("No fault injected.\n\n");
        else {
            b.append("| fault | site | start (s) | end (s) | what | ok during (all sites) | unknown during (all sites) |\n|---|---|---:|---:|---|---:|---:|\n");
            for (Faults.Fault f : faults.injected()) {
                long end = f.endNanos() < 0 ? Long.MAX_VALUE : f.endNanos();
                long okDuring = txns.stream().filter(t -> t.process() < FINAL_PROCESS && t.ok() && t.completeTime() >= f.startNanos() && t.completeTime() <= end).count();
                long unkDuring = txns.stream().filter(t -> t.process() < FINAL_PROCESS && t.outcome() == OpType.INFO && t.invokeTime() <= end
                        && (t.completeTime() >= f.startNanos())).count();
                b.append("| ").append(f.kind()).append(" | ").append(f.site()).append(" | ").append(String.format("%.1f", f.startNanos() / 1e9))
                        .append(" | ").append(f.endNanos() < 0 ? "stays down" : String.format("%.1f", f.endNanos() / 1e9)).append(" | ")
                        .append(f.note()).append(" | ").append(okDuring).append(" | ").append(unkDuring).append(" |\n");
            }
            b.append('\n');
        }
        for (String n : faults.notes()) b.append("- ").append(n).append('\n');
        if (!faults.notes().isEmpty()) b.append('\n');

        b.append("## Replicas\n\n").append("Lost (acknowledged appends missing at a serving replica): ").append(sum.lost())
                .append("; divergent (keys differing between serving replicas, or table digests differing): ").append(sum.divergent()).append(".\n\n");
        for (String d : divergence.subList(0, Math.min(20, divergence.size()))) b.append("- ").append(d).append('\n');
        if (!divergence.isEmpty()) b.append('\n');
        if (png != null) b.append("![timeline](").append(png.getFileName()).append(")\n\n");
        b.append(result.markdown());
        return b.toString();
    }

    /** The summary as one JSON line. */
    public static String json(Summary s) {
        try {
            return JSON.copy().disable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(s);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
