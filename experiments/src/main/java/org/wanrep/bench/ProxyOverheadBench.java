package org.wanrep.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.wanrep.config.Config;
import org.wanrep.emulator.synthetic.SyntheticWorkload;
import org.wanrep.gcs.jgroups.GcsSettings;
import org.wanrep.pg.LocalPostgres;
import org.wanrep.site.Site;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Proxy overhead at one site without delay, as ratios measured in one run: pgbench against the
 * proxy versus pgbench against the same PostgreSQL directly, alternating rounds so that machine
 * noise hits both alike. Workloads with targets: select-only (pgbench -S, prepared), and the
 * synthetic 10-update transaction in one request where each client updates its own table, so the
 * ratio is the cost of the replication path. Without a target, for information: the same
 * transaction on random tables, as the study's workload draws them, where 8 clients conflict at
 * the table level nearly always and the middleware's table locks (the study's design) serialize
 * what PostgreSQL's row locks let run side by side.
 *
 * <p>Each round also runs pgbench through a {@link ByteRelay}, a process that copies bytes and does
 * nothing else: the ceiling any interposed proxy can reach on this machine. proxy/relay is the
 * share of that ceiling wanrep reaches; relay/direct is what interposition itself costs here.
 */
public final class ProxyOverheadBench {
    public record Result(String workload, int clients, double directTps, double relayTps, double proxyTps, double ratio, double target) {
        public double relayRatio() { return relayTps / directTps; }
        public double proxyOfRelay() { return proxyTps / relayTps; }

        /** No target (NaN): reported for information. */
        public boolean pass() { return Double.isNaN(target) || ratio >= target; }
    }

    private static final SyntheticWorkload SYNTHETIC = new SyntheticWorkload();

    private final int clients, seconds, rounds;
    private final String delivery;
    private final PrintStream out;
    private int relayPort;

    public ProxyOverheadBench(int clients, int seconds, int rounds, String delivery, PrintStream out) {
        this.clients = clients;
        this.seconds = seconds;
        this.rounds = rounds;
        this.delivery = delivery;
        this.out = out;
    }

    /** pgbench's tpcb-like with its five statements sent as one simple-protocol request. */
    static final String TPCB_ONE_REQUEST = String.join("\n",
            "\\set aid random(1, 100000 * :scale)", "\\set bid random(1, 1 * :scale)", "\\set tid random(1, 10 * :scale)",
            "\\set delta random(-5000, 5000)",
            "UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid \\;",
            "SELECT abalance FROM pgbench_accounts WHERE aid = :aid \\;",
            "UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid \\;",
            "UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid \\;",
            "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);", "");

    private java.util.Set<String> only = java.util.Set.of();

    /** Runs only the workloads named (select-only, own-table, random-tables, tpcb-one-request); none: all. */
    public ProxyOverheadBench only(java.util.Set<String> workloads) { this.only = workloads; return this; }

    private boolean selected(String w) { return only.isEmpty() || only.contains(w); }

    public List<Result> run() throws Exception {
        try (LocalPostgres pg = LocalPostgres.startTemporary()) {
            Map<String, String> conf = new LinkedHashMap<>();
            conf.put("sites", "solo");
            conf.put("latency_matrix", "none");
            conf.put("delivery", delivery);
            conf.put("pool.size", Integer.toString(Math.max(8, clients)));
            conf.put("postgres.port", Integer.toString(pg.port()));
            conf.put("postgres.socket_dir", pg.dataDir().toString());
            conf.put("gcs.port", Integer.toString(GcsSettings.freePorts(1).get(0)));
            conf.put("proxy.port", Integer.toString(LocalPostgres.freePort()));
            try (Site site = Site.start(Config.build(conf, List.of()), "solo", Duration.ofSeconds(60));
                 ByteRelay relay = new ByteRelay(pg.dataDir(), pg.port())) {
                relayPort = relay.port();
                out.println("loading: pgbench -i -s 10 and the synthetic tables (10 x 10,000 rows), directly...");
                pgbench(pg.port(), List.of("-i", "-s", "10", "-q"), 600);
                try (Connection c = pg.connect()) {
                    SYNTHETIC.load(c, null);
                }
                Path own = Files.createTempFile("wanrep-10-updates-own-table", ".sql");
                own.toFile().deleteOnExit();
                Files.writeString(own, SYNTHETIC.pgbenchOwnTableUpdateScript());
                Path random = Files.createTempFile("wanrep-10-updates", ".sql");
                random.toFile().deleteOnExit();
                Files.writeString(random, SYNTHETIC.pgbenchUpdateScript());
                Path tpcb = Files.createTempFile("wanrep-tpcb-one-request", ".sql");
                tpcb.toFile().deleteOnExit();
                Files.writeString(tpcb, TPCB_ONE_REQUEST);
                List<Result> results = new ArrayList<>();
                if (selected("select-only")) results.add(compare("select-only (pgbench -S -M prepared)", pg.port(), site.proxyPort(),
                        List.of("-S", "-M", "prepared"), 0.7));
                if (selected("own-table")) results.add(compare("10 updates, one request, own table", pg.port(), site.proxyPort(),
                        List.of("-M", "simple", "-f", own.toString()), 0.5));
                if (selected("random-tables")) results.add(compare("10 updates, one request, random tables", pg.port(), site.proxyPort(),
                        List.of("-M", "simple", "-f", random.toString()), Double.NaN));
                // every transaction writes the same four tables: row locks let different rows run side by side
                if (selected("tpcb-one-request")) results.add(compare("tpcb-like, one request (\\;)", pg.port(), site.proxyPort(),
                        List.of("-M", "simple", "-s", "10", "-f", tpcb.toString()), Double.NaN));   // -s: :scale of a custom script
                Files.deleteIfExists(tpcb);
                Files.deleteIfExists(own);
                Files.deleteIfExists(random);
                return results;
            }
        }
    }

    private Result compare(String name, int directPort, int proxyPort, List<String> args, double target) throws Exception {
        double direct = 0, relay = 0, proxy = 0;
        for (int r = 1; r <= rounds; r++) {
            double d = tps(directPort, args), b = tps(relayPort, args), p = tps(proxyPort, args);
            out.printf("  %-40s round %d/%d: direct %8.0f tps, byte relay %8.0f tps, proxy %8.0f tps%n", name, r, rounds, d, b, p);
            direct += d;
            relay += b;
            proxy += p;
        }
        return new Result(name, clients, direct / rounds, relay / rounds, proxy / rounds, proxy / direct, target);
    }

    private double tps(int port, List<String> args) throws Exception {
        List<String> a = new ArrayList<>(args);
        a.addAll(List.of("-c", Integer.toString(clients), "-j", "2", "-T", Integer.toString(seconds), "-n"));
        String output = pgbench(port, a, seconds + 120);
        Matcher m = Pattern.compile("tps = ([0-9.]+)").matcher(output);
        if (!m.find()) throw new IllegalStateException("pgbench printed no tps:\n" + output);
        Matcher f = Pattern.compile("number of failed transactions: (\\d+)").matcher(output);
        if (f.find() && Long.parseLong(f.group(1)) > 0) throw new IllegalStateException("pgbench reports failed transactions:\n" + output);
        return Double.parseDouble(m.group(1));
    }

    static String pgbench(int port, List<String> args, int timeoutS) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(pgbenchBinary(), "-h", "127.0.0.1", "-p", Integer.toString(port), "-U", "postgres"));
        cmd.addAll(args);
        cmd.add("postgres");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(timeoutS, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("pgbench timed out");
        }
        if (p.exitValue() != 0) throw new IllegalStateException("pgbench failed (" + String.join(" ", cmd) + "):\n" + output);
        return output;
    }

    static String pgbenchBinary() {
        for (String c : List.of("/usr/lib/postgresql/15/bin/pgbench", "/usr/bin/pgbench"))
            if (Files.isExecutable(Path.of(c))) return c;
        return "pgbench";
    }

    public static String table(List<Result> rs) {
        // ratio = proxy/direct (the target's measure); relay/direct = the ceiling of any interposed process
        StringBuilder b = new StringBuilder(String.format("%-40s %7s %11s %11s %11s %12s %11s %7s %7s %s%n", "workload", "clients",
                "direct tps", "relay tps", "proxy tps", "relay/direct", "proxy/relay", "ratio", "target", "verdict"));
        for (Result r : rs)
            b.append(String.format("%-40s %7d %11.0f %11.0f %11.0f %12.2f %11.2f %7.2f %7s %s%n", r.workload(), r.clients(), r.directTps(),
                    r.relayTps(), r.proxyTps(), r.relayRatio(), r.proxyOfRelay(), r.ratio(),
                    Double.isNaN(r.target()) ? "-" : String.format("%.2f", r.target()), Double.isNaN(r.target()) ? "(table-lock contention)" : r.pass() ? "PASS" : "FAIL"));
        return b.toString();
    }

    public static String json(List<Result> rs) throws Exception {
        List<Map<String, Object>> list = new ArrayList<>();
        for (Result r : rs) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("workload", r.workload());
            m.put("clients", r.clients());
            m.put("direct_tps", Math.round(r.directTps()));
            m.put("relay_tps", Math.round(r.relayTps()));
            m.put("proxy_tps", Math.round(r.proxyTps()));
            m.put("ratio", Math.round(r.ratio() * 1000) / 1000.0);
            m.put("relay_ratio", Math.round(r.relayRatio() * 1000) / 1000.0);
            m.put("proxy_of_relay", Math.round(r.proxyOfRelay() * 1000) / 1000.0);
            if (!Double.isNaN(r.target())) {
                m.put("target", r.target());
                m.put("pass", r.pass());
            }
            list.add(m);
        }
        return new ObjectMapper().writeValueAsString(Map.of("benchmark", "proxy-overhead", "results", list));
    }
}
