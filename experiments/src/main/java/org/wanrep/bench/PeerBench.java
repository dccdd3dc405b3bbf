package org.wanrep.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.wanrep.emulator.synthetic.SyntheticWorkload;
import org.wanrep.pg.LocalPostgres;
import org.wanrep.pg.TableDigest;
import org.wanrep.experiments.ProcessCpu;
import org.wanrep.site.InProcessCluster;

import java.io.IOException;
import java.io.PrintStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * wanrep beside its peers, measured in one run on one machine: direct PostgreSQL, pgbouncer (session
 * pool) in front of one PostgreSQL, pgpool-II native replication of three PostgreSQL, and a 3-site
 * wanrep on the {@code lan} matrix (safe delivery, symmetric execution; the clients connect to site
 * a, as pgpool's connect to pgpool). Each system gets the same pgbench workloads; afterwards the
 * replicas of pgpool-II and of wanrep are compared table by table. Beside them, {@code 3-servers}: what the
 * machine allows any system that runs every update at three replicas, with no middleware at all (three PostgreSQL
 * servers, each given the whole workload by a pgbench of its own at once; see {@link #replicated}).
 *
 * <p>pgbouncer and pgpool-II are the Debian packages' binaries, started here as child processes in
 * temporary directories on free ports with configuration written here (run as user postgres when
 * this runs as root, as {@link LocalPostgres} runs PostgreSQL: both refuse root).
 */
public final class PeerBench {
    /**
     * The ceiling of a three-replica system on this machine: three PostgreSQL servers with no middleware, every update
     * workload run at all three at once (a pgbench each, all clients each), a read-only one at one of them (a replicated
     * system reads at one site). Its tps is what each server achieved (their mean) while the three shared the
     * machine's cores: about the most a system that executes every update at three replicas can reach on this
     * machine, less whatever its middleware costs. Somewhat understated: the three pgbench processes cost about twice
     * the client CPU one would (fewer clients per server measured no better: 1, 2, 4 and 8 within the spread).
     */
    public static final String CEILING = "3-servers";

    public static final List<String> SYSTEMS = List.of("direct", "pgbouncer", "pgpool-II", "wanrep", CEILING);

    /**
     * One pgbench run: tps, failed transactions (pgbench's count), a note if pgbench stopped early, and the machine's
     * busy CPU per committed transaction over the run in microseconds (every process on it: the system under test,
     * its PostgreSQL servers and pgbench; what makes a ratio on a shared two-core machine), 0 where not measured.
     */
    public record Run(String workload, String system, double tps, long failed, String note, long transactions, double cpuMicrosPerTxn,
                      double switchesPerTxn, double serversMicrosPerTxn, double middlewareMicrosPerTxn) {
        public Run(String workload, String system, double tps, long failed, String note) { this(workload, system, tps, failed, note, 0, 0, 0, 0, 0); }

        Run(String workload, String system, double tps, long failed, String note, long transactions) {
            this(workload, system, tps, failed, note, transactions, 0, 0, 0, 0);
        }

        /**
         * With the CPU spent over the run: the machine's, the system's PostgreSQL servers' (every backend, the exited
         * ones too) and its middleware's (pgbouncer, pgpool-II with its children, wanrep's JVM; none for direct).
         */
        Run withCpu(long busyMicros, long switches, long serversMicros, long middlewareMicros) {
            double n = transactions;
            return transactions == 0 ? this : new Run(workload, system, tps, failed, note, transactions, busyMicros / n, switches / n,
                    serversMicros / n, middlewareMicros / n);
        }
    }

    /** The machine's context switches so far (/proc/stat ctxt), or 0 if unreadable. */
    static long contextSwitches() {
        try {
            for (String l : Files.readAllLines(Path.of("/proc/stat"))) if (l.startsWith("ctxt ")) return Long.parseLong(l.substring(5).trim());
        } catch (Exception e) {
            // not Linux
        }
        return 0;
    }

    /** The machine's busy CPU time so far in microseconds (/proc/stat: user, nice, system, irq, softirq), or 0 if unreadable. */
    static long busyMicros() {
        try {
            String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
            long ticks = Long.parseLong(f[1]) + Long.parseLong(f[2]) + Long.parseLong(f[3]) + Long.parseLong(f[6]) + Long.parseLong(f[7]);
            return ticks * 10_000;   // USER_HZ is 100 on Linux
        } catch (Exception e) {
            return 0;
        }
    }

    /** {@code everySite}: wanrep's clients are spread over its three sites (the others have one endpoint). */
    private record Workload(String name, List<String> args, boolean everySite) {
        Workload(String name, List<String> args) { this(name, args, false); }

        /** pgbench's select-only script: what a replicated system runs at one site. */
        boolean readOnly() { return args.contains("-S"); }
    }

    /** wanrep's three proxies (for a workload whose clients use every site). */
    private final List<Integer> wanrepPorts = new ArrayList<>();

    /** The three servers of {@link #CEILING}. */
    private final List<Integer> ceilingPorts = new ArrayList<>();

    /** Per system: its PostgreSQL servers' postmasters, and its middleware's process (-1: none; this JVM for wanrep). */
    private final Map<String, List<Long>> serverPids = new LinkedHashMap<>();
    private final Map<String, Long> middlewarePid = new LinkedHashMap<>();

    private long serversMicros(String system) { return ProcessCpu.treeMicros(serverPids.getOrDefault(system, List.of())); }

    /** wanrep runs in this JVM, whose children are the pgbench runs: its own threads only; a peer's whole process tree. */
    private long middlewareMicros(String system) {
        long pid = middlewarePid.getOrDefault(system, -1L);
        if (pid < 0) return 0;
        return pid == ProcessHandle.current().pid() ? ProcessCpu.ownMicros(pid) : ProcessCpu.treeMicros(List.of(pid));
    }

    private static final String TPCB_ONE_REQUEST = String.join("\n",
            "\\set aid random(1, 100000 * :scale)",
            "\\set bid random(1, 1 * :scale)",
            "\\set tid random(1, 10 * :scale)",
            "\\set delta random(-5000, 5000)",
            "UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid \\;",
            "SELECT abalance FROM pgbench_accounts WHERE aid = :aid \\;",
            "UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid \\;",
            "UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid \\;",
            "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);", "");

    /** Short names of the workloads, in the order they run (for {@code --workloads}). */
    public static final List<String> WORKLOADS = List.of("select", "tpcb", "interactive", "random", "every-site");

    private final int clients, seconds, scale;
    /** Seconds of the same pgbench run before each measured one, its result dropped (JIT compilation, caches, autovacuum's first pass). */
    private int warmup;

    /** Every system and workload first runs {@code s} seconds unmeasured (0: none). */
    public PeerBench warmup(int s) {
        this.warmup = s;
        return this;
    }
    private final PrintStream out;
    private final Map<String, String> replicaVerdicts = new LinkedHashMap<>();
    private final Map<String, String> wanrepSettings;
    private final List<String> only;
    /** The systems run, in {@link #SYSTEMS}' order; direct always (every ratio is to it). */
    private List<String> systems = SYSTEMS;

    /**
     * Runs only {@code names} of {@link #SYSTEMS} besides direct PostgreSQL, which every ratio is to (for a quicker
     * comparison while working on one of them: {@code wanrep} alone takes a fifth of the time).
     */
    public PeerBench systems(List<String> names) {
        for (String n : names)
            if (!SYSTEMS.contains(n)) throw new IllegalArgumentException("unknown system " + n + " (of " + SYSTEMS + ")");
        this.systems = SYSTEMS.stream().filter(x -> x.equals("direct") || names.contains(x)).toList();
        return this;
    }

    public PeerBench(int clients, int seconds, int scale, PrintStream out) {
        this(clients, seconds, scale, Map.of(), WORKLOADS, out);
    }

    /** {@code wanrepSettings} override the wanrep cluster's (e.g. blocks=certify); {@code only}: names from {@link #WORKLOADS}. */
    public PeerBench(int clients, int seconds, int scale, Map<String, String> wanrepSettings, List<String> only, PrintStream out) {
        this.clients = clients;
        this.seconds = seconds;
        this.scale = scale;
        this.out = out;
        this.wanrepSettings = Map.copyOf(wanrepSettings);
        for (String w : only)
            if (!WORKLOADS.contains(w)) throw new IllegalArgumentException("unknown workload " + w + " (one of " + WORKLOADS + ")");
        this.only = List.copyOf(only);
    }

    private final Map<String, String> certification = new LinkedHashMap<>();

    private int rounds = 1;
    /** Per workload, each round's runs, when there was more than one (see {@link PeerRounds}). */
    private final Map<String, List<List<Run>>> roundsByWorkload = new LinkedHashMap<>();

    /**
     * Measures every system {@code n} times per workload, alternated, and combines them by the median of the rounds'
     * ratios to direct (see {@link PeerRounds}); warm-ups run before the first round only.
     */
    public PeerBench rounds(int n) {
        if (n < 1) throw new IllegalArgumentException("rounds must be at least 1");
        this.rounds = n;
        return this;
    }

    /** Per workload, each round's runs (empty with one round). */
    public Map<String, List<List<Run>>> rounds() { return roundsByWorkload; }

    /** The per-round tables (empty with one round). */
    public String roundTables() {
        StringBuilder b = new StringBuilder();
        roundsByWorkload.forEach((w, rs) -> b.append(PeerRounds.table(w, rs)));
        return b.toString();
    }

    /** wanrep site -> its interactive blocks certified and aborted by certification (SHOW wanrep.certification). */
    public Map<String, String> certification() { return certification; }

    /** "pgpool-II" / "wanrep" -> "same" or which tables differ. */
    public Map<String, String> replicaVerdicts() { return replicaVerdicts; }

    public List<Run> run() throws Exception {
        Path work = Files.createTempDirectory("wanrep-peer-bench-");
        List<AutoCloseable> open = new ArrayList<>();
        try {
            out.println("starting direct PostgreSQL (pgbouncer's backend too)...");
            LocalPostgres direct = LocalPostgres.startTemporary();
            open.add(direct);
            Map<String, Integer> ports = new LinkedHashMap<>();
            ports.put("direct", direct.port());
            long directPm = LocalPostgres.postmasterPid(direct.dataDir());
            serverPids.put("direct", List.of(directPm));
            List<LocalPostgres> backends = new ArrayList<>();
            if (systems.contains("pgbouncer")) {
                out.println("starting pgbouncer (session pool)...");
                Child bouncer = pgbouncer(work.resolve("pgbouncer"), direct.port());
                open.add(bouncer);
                ports.put("pgbouncer", bouncer.port);
                serverPids.put("pgbouncer", List.of(directPm));
                middlewarePid.put("pgbouncer", bouncer.process.pid());
            }
            if (systems.contains("pgpool-II")) {
                out.println("starting 3 PostgreSQL and pgpool-II (native replication)...");
                for (int i = 0; i < 3; i++) {
                    LocalPostgres b = LocalPostgres.startTemporary();
                    open.add(b);
                    backends.add(b);
                }
                Child pgpool = pgpool(work.resolve("pgpool"), backends);
                open.add(pgpool);
                ports.put("pgpool-II", pgpool.port);
                serverPids.put("pgpool-II", backends.stream().map(b -> LocalPostgres.postmasterPid(b.dataDir())).toList());
                middlewarePid.put("pgpool-II", pgpool.process.pid());
            }
            InProcessCluster wanrep = null;
            if (systems.contains("wanrep")) {
                out.println("starting wanrep: 3 sites on lan, safe delivery, symmetric execution...");
                Map<String, String> settings = new LinkedHashMap<>(Map.of("delivery", "safe", "execution", "symmetric", "pool.size", Integer.toString(Math.max(8, clients))));
                // clear text between the sites unless --set gcs.secret_file=FILE: pgpool-II talks to its backends in clear
                // text too, and the earlier runs in docs/benchmarks.md were measured so
                settings.put("gcs.secret_file", "");
                settings.putAll(wanrepSettings);
                if (!wanrepSettings.isEmpty()) out.println("wanrep settings: " + wanrepSettings);
                wanrep = new InProcessCluster(List.of("a", "b", "c"), "lan", settings, out);
                open.add(wanrep);
                ports.put("wanrep", wanrep.site(0).proxyPort());
                for (int i = 0; i < 3; i++) wanrepPorts.add(wanrep.site(i).proxyPort());
                List<Long> wanrepServers = new ArrayList<>();
                for (int i = 0; i < 3; i++) wanrepServers.add(LocalPostgres.postmasterPid(wanrep.postgres(i).dataDir()));
                serverPids.put("wanrep", wanrepServers);
                middlewarePid.put("wanrep", ProcessHandle.current().pid());
            }

            if (systems.contains(CEILING)) {
                out.println("starting 3 PostgreSQL without middleware (the three-replica ceiling)...");
                List<LocalPostgres> three = LocalPostgres.startTemporary(3);
                open.addAll(three);
                for (LocalPostgres p : three) ceilingPorts.add(p.port());
                ports.put(CEILING, ceilingPorts.get(0));
                serverPids.put(CEILING, three.stream().map(p -> LocalPostgres.postmasterPid(p.dataDir())).toList());
            }

            SyntheticWorkload synthetic = new SyntheticWorkload();
            // direct and pgbouncer share one database; pgpool-II and wanrep load through themselves, so their replicas get it all
            Map<String, List<Integer>> loaded = new LinkedHashMap<>();
            for (String s : List.of("direct", "pgpool-II", "wanrep")) if (systems.contains(s)) loaded.put(s, List.of(ports.get(s)));
            if (systems.contains(CEILING)) loaded.put(CEILING, ceilingPorts);
            for (Map.Entry<String, List<Integer>> e : loaded.entrySet()) {
                out.printf("loading %s: pgbench -i -s %d and the synthetic tables...%n", e.getKey(), scale);
                for (int port : e.getValue()) {
                    pgbench(port, List.of("-i", "-s", Integer.toString(scale), "-q"), 1800);
                    try (Connection c = connect(port)) {
                        synthetic.load(c, null);
                    }
                }
            }
            Path oneRequest = work.resolve("tpcb-one-request.sql");
            Files.writeString(oneRequest, TPCB_ONE_REQUEST);
            Path random = work.resolve("10-updates-random-tables.sql");
            Files.writeString(random, synthetic.pgbenchUpdateScript());
            List<Workload> all = List.of(
                    new Workload("select-only (-S -M prepared)", List.of("-S", "-M", "prepared")),
                    // -s: a custom script's :scale is 1 unless given (all clients on one branch), where the built-in tpcb-like reads it from the tables
                    new Workload("tpcb-like, one request (\\;, simple)", List.of("-M", "simple", "-s", Integer.toString(scale), "-f", oneRequest.toString())),
                    new Workload("tpcb-like, interactive (--max-tries=10)", List.of("-b", "tpcb-like", "--max-tries=10")),
                    new Workload("10 updates, one request, random tables", List.of("-M", "simple", "-f", random.toString())),
                    // issue 13's second target: interactive blocks from every wanrep site at once (the others: the same clients, one endpoint)
                    new Workload("tpcb-like, interactive, clients split over wanrep's 3 sites", List.of("-b", "tpcb-like", "--max-tries=10"), true));
            List<Workload> workloads = new ArrayList<>();
            for (int i = 0; i < all.size(); i++) if (only.contains(WORKLOADS.get(i))) workloads.add(all.get(i));
            List<Run> runs = new ArrayList<>();
            for (Workload w : workloads) {
                List<List<Run>> each = new ArrayList<>();
                for (int round = 1; round <= rounds; round++) {
                    List<Run> these = new ArrayList<>();
                    for (String s : systems) {
                        out.printf("  %-42s %-10s%s ... ", w.name(), s, rounds == 1 ? "" : " round " + round + "/" + rounds);
                        out.flush();
                        Run r = measure(w, s, ports.get(s), round == 1);   // warm from the first round on
                        Integer jit = s.equals("wanrep") && round == 1 ? jitWarmup.get(w.name()) : null;
                        out.printf("%8.0f tps, %d failed%s%s%n", r.tps(), r.failed(), r.note().isEmpty() ? "" : " (" + r.note() + ")",
                                jit == null ? "" : " (warmed up " + (warmup + jit) + " s: until the JIT compiler was quiet)");
                        these.add(r);
                    }
                    each.add(these);
                }
                if (rounds > 1) roundsByWorkload.put(w.name(), each);
                runs.addAll(PeerRounds.combine(each));
            }
            for (int i = 0; wanrep != null && i < 3; i++) {
                try (Connection c = connect(wanrep.site(i).proxyPort()); java.sql.Statement st = c.createStatement();
                     java.sql.ResultSet r = st.executeQuery("SHOW wanrep.certification")) {
                    r.next();
                    certification.put(r.getString("site"), r.getString("certified_commits") + " certified, " + r.getString("certification_aborts")
                            + " aborted by certification (" + r.getString("aborts_of_own_clients") + " of its own clients')");
                }
            }
            out.println("comparing replicas...");
            if (!backends.isEmpty()) {
                List<Map<String, TableDigest.Digest>> ds = new ArrayList<>();
                for (LocalPostgres b : backends) {
                    try (Connection c = b.connect()) {
                        ds.add(TableDigest.of(c));
                    }
                }
                replicaVerdicts.put("pgpool-II", summary(TableDigest.compare(List.of("backend0", "backend1", "backend2"), ds)));
            }
            if (wanrep != null) replicaVerdicts.put("wanrep", summary(wanrep.check()));
            return runs;
        } finally {
            for (int i = open.size() - 1; i >= 0; i--) {
                try {
                    open.get(i).close();
                } catch (Exception e) {
                    out.println("closing: " + e.getMessage());
                }
            }
            deleteTree(work);
        }
    }

    private static String summary(Map<String, String> verdicts) {
        List<String> bad = new ArrayList<>();
        verdicts.forEach((t, v) -> {
            if (!v.equals("same")) bad.add(t + ": " + v);
        });
        return bad.isEmpty() ? "same (" + verdicts.size() + " tables)" : String.join("; ", bad);
    }

    /** {@code warmUp}: with the warm-up runs first (the first round; later rounds find the system warm). */
    private Run measure(Workload w, String system, int port, boolean warmUp) throws Exception {
        if (warmUp && warmup > 0) measure(w, system, port, warmup);
        if (warmUp && system.equals("wanrep") && jitWarmupMax > 0) warmUntilCompiled(w, port);
        long busy = busyMicros(), switches = contextSwitches(), servers = serversMicros(system), middleware = middlewareMicros(system);
        boolean threads = system.equals("wanrep") && !w.everySite() && seconds >= THREAD_WINDOW_MIN_SECONDS;
        Run r = threads ? measureThreads(w, port) : measure(w, system, port, seconds);
        return r.withCpu(busyMicros() - busy, contextSwitches() - switches, serversMicros(system) - servers, middlewareMicros(system) - middleware);
    }

    /** After its warm-up, wanrep goes on warming up in runs of this many seconds while its JIT compiler is still busy. */
    static final int JIT_CHUNK_SECONDS = 5;

    /** The JIT compiler threads' share of one core in the last such run under which wanrep's JVM counts as warm. */
    static final double JIT_QUIET_SHARE = 0.05;

    /** At most this many seconds of it per workload (0: none; see {@link #warmUntilCompiled}). */
    private int jitWarmupMax = 120;

    /** wanrep's extra warm-up per workload until its JIT compiler was quiet, in seconds (see {@link #warmUntilCompiled}). */
    private final Map<String, Integer> jitWarmup = new LinkedHashMap<>();

    /** wanrep's JVM warms up until its JIT compiler is quiet, for at most {@code s} seconds more per workload (0: only {@link #warmup}). */
    public PeerBench jitWarmupMax(int s) {
        this.jitWarmupMax = s;
        return this;
    }

    /** Per workload, the seconds wanrep warmed up beyond {@link #warmup} until its JIT compiler was quiet. */
    public Map<String, Integer> jitWarmup() { return jitWarmup; }

    /**
     * wanrep's three sites run in this JVM, whose JIT compiler works for about a minute of a new load (a quarter of a
     * core for ~45 s of interactive blocks, ~1% after), while the peers are compiled ahead: measured in that minute wanrep
     * would pay for its compilation, which a site serving for hours does not. So after the fixed warm-up the same
     * workload runs on in {@link #JIT_CHUNK_SECONDS} s runs until the compiler threads took less than
     * {@link #JIT_QUIET_SHARE} of a core over the last one, for at most {@link #jitWarmupMax} s.
     */
    private void warmUntilCompiled(Workload w, int port) throws Exception {
        long pid = ProcessHandle.current().pid();
        int spent = 0;
        while (spent < jitWarmupMax) {
            Map<Long, org.wanrep.experiments.ThreadCpu.Sample> before = org.wanrep.experiments.ThreadCpu.sample(pid);
            measure(w, "wanrep", port, JIT_CHUNK_SECONDS);
            spent += JIT_CHUNK_SECONDS;
            double share = compilerShare(org.wanrep.experiments.ThreadCpu.growth(before, org.wanrep.experiments.ThreadCpu.sample(pid)), JIT_CHUNK_SECONDS);
            if (share < JIT_QUIET_SHARE) break;
        }
        jitWarmup.put(w.name(), spent);
    }

    /** The JIT compiler threads' CPU over {@code seconds} as a share of one core, from the growth of this JVM's thread groups. */
    static double compilerShare(Map<String, org.wanrep.experiments.ThreadCpu.Growth> growth, int seconds) {
        long micros = 0;
        for (var e : growth.entrySet()) if (e.getKey().contains("CompilerThre")) micros += e.getValue().micros();
        return micros / (seconds * 1_000_000.0);
    }

    /** The shortest run whose middle (its first 2 s and last 1 s left out) shows wanrep's threads at work. */
    static final int THREAD_WINDOW_MIN_SECONDS = 5;

    /** Per workload, wanrep's JVM by thread group over the middle of its run: CPU microseconds and voluntary switches per transaction. */
    private final Map<String, Map<String, double[]>> wanrepThreads = new LinkedHashMap<>();

    /** wanrep's JVM by thread group, per workload (see {@link #measureThreads}). */
    public Map<String, Map<String, double[]>> wanrepThreads() { return wanrepThreads; }

    /**
     * A wanrep run that also samples this JVM's threads (all three sites run in it) 2 s after pgbench starts and 1 s before
     * it ends, while its client sessions still live, and counts the transactions in between from pgbench's per-second
     * progress: where the middleware's CPU and thread wake-ups go per transaction.
     */
    private Run measureThreads(Workload w, int port) throws Exception {
        List<String> a = pgbenchArgs(w, clients, 2, seconds);
        a.addAll(List.of("-P", "1"));
        long pid = ProcessHandle.current().pid();
        List<Map<Long, org.wanrep.experiments.ThreadCpu.Sample>> samples = java.util.Collections.synchronizedList(new ArrayList<>());
        java.util.concurrent.ScheduledExecutorService timer = java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
        try {
            timer.schedule(() -> samples.add(org.wanrep.experiments.ThreadCpu.sample(pid)), 2, TimeUnit.SECONDS);
            timer.schedule(() -> samples.add(org.wanrep.experiments.ThreadCpu.sample(pid)), seconds - 1, TimeUnit.SECONDS);
            Result res = run(port, a, seconds + 180);
            Run r = parse(w, "wanrep", res);
            long inWindow = transactionsBetween(res.output, 2, seconds - 1);
            if (samples.size() == 2 && inWindow > 0) {
                Map<String, double[]> perTxn = new LinkedHashMap<>();
                org.wanrep.experiments.ThreadCpu.growth(samples.get(0), samples.get(1)).forEach((g, x) ->
                        perTxn.put(g, new double[]{(double) x.micros() / inWindow, (double) x.voluntary() / inWindow}));
                wanrepThreads.put(w.name(), perTxn);
            }
            return r;
        } finally {
            timer.shutdownNow();
        }
    }

    /** pgbench's arguments for a measured run of {@code w}: its own, then clients, threads and duration, no vacuum. */
    private static List<String> pgbenchArgs(Workload w, int clients, int threads, int seconds) {
        List<String> a = new ArrayList<>(w.args());
        a.addAll(List.of("-c", Integer.toString(clients), "-j", Integer.toString(threads), "-T", Integer.toString(seconds), "-n"));
        return a;
    }

    /** Transactions pgbench reported in its progress lines ({@code -P 1}) for the seconds after {@code from} up to {@code to}. */
    static long transactionsBetween(String pgbenchOutput, int from, int to) {
        Matcher m = Pattern.compile("(?m)^progress: ([0-9.]+) s, ([0-9.]+) tps").matcher(pgbenchOutput);
        double sum = 0;
        while (m.find()) {
            double at = Double.parseDouble(m.group(1));
            if (at > from && at <= to) sum += Double.parseDouble(m.group(2));   // each line: the second that ends there
        }
        return Math.round(sum);
    }

    private Run measure(Workload w, String system, int port, int seconds) throws Exception {
        if (w.everySite() && system.equals("wanrep")) return measureEverySite(w, seconds);
        if (system.equals(CEILING) && !w.readOnly()) return measureCeiling(w, seconds);
        return parse(w, system, run(port, pgbenchArgs(w, clients, 2, seconds), seconds + 180));
    }

    /** The same workload at each of the three servers of {@link #CEILING} at once, all clients each (see {@link #replicated}). */
    private Run measureCeiling(Workload w, int seconds) throws Exception {
        return replicated(atOnce(w, CEILING, ceilingPorts, pgbenchArgs(w, clients, 2, seconds), seconds));
    }

    /** One pgbench with {@code args} per port, all at once; their runs in the ports' order. */
    private static List<Run> atOnce(Workload w, String system, List<Integer> ports, List<String> args, int seconds) throws Exception {
        List<java.util.concurrent.Future<Run>> fs = new ArrayList<>();
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(ports.size());
        try {
            for (int port : ports) fs.add(pool.submit(() -> parse(w, system, run(port, args, seconds + 180))));
            List<Run> each = new ArrayList<>();
            for (var f : fs) each.add(f.get());
            return each;
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Runs of one workload at every replica at once, as one replicated run: each transaction counted once (the servers'
     * mean of tps and of transactions), failures summed, notes joined.
     */
    static Run replicated(List<Run> each) {
        double tps = each.stream().mapToDouble(Run::tps).average().orElse(0);
        long txns = Math.round(each.stream().mapToLong(Run::transactions).average().orElse(0));
        long failed = each.stream().mapToLong(Run::failed).sum();
        Run first = each.get(0);
        return new Run(first.workload(), first.system(), tps, failed, notes(each), txns);
    }

    /** One pgbench per wanrep site at once, the clients split among them; tps and failures summed. */
    private Run measureEverySite(Workload w, int seconds) throws Exception {
        int per = Math.max(1, clients / wanrepPorts.size());
        List<Run> each = atOnce(w, "wanrep", wanrepPorts, pgbenchArgs(w, per, 1, seconds), seconds);
        double tps = each.stream().mapToDouble(Run::tps).sum();
        long txns = each.stream().mapToLong(Run::transactions).sum();
        long failed = each.stream().mapToLong(Run::failed).sum();
        return new Run(w.name(), "wanrep", tps, failed, notes(each), txns);
    }

    /** The runs' notes (pgbench stopped early), joined. */
    private static String notes(List<Run> each) {
        return String.join("; ", each.stream().map(Run::note).filter(n -> !n.isEmpty()).toList());
    }

    private static Run parse(Workload w, String system, Result r) {
        Matcher m = Pattern.compile("tps = ([0-9.]+)").matcher(r.output);
        double tps = m.find() ? Double.parseDouble(m.group(1)) : 0;
        Matcher f = Pattern.compile("number of failed transactions: (\\d+)").matcher(r.output);
        long failed = f.find() ? Long.parseLong(f.group(1)) : 0;
        String note = "";
        if (r.exit != 0) {
            Matcher e = Pattern.compile("(?m)^.*(ERROR|error|aborted).*$").matcher(r.output);
            note = "pgbench exit " + r.exit + (e.find() ? ": " + e.group().strip() : "");
        }
        Matcher n = Pattern.compile("number of transactions actually processed: (\\d+)").matcher(r.output);
        long txns = n.find() ? Long.parseLong(n.group(1)) : 0;
        return new Run(w.name(), system, tps, failed, note, txns);
    }

    private record Result(int exit, String output) {}

    private static Result run(int port, List<String> args, int timeoutS) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(ProxyOverheadBench.pgbenchBinary(), "-h", "127.0.0.1", "-p", Integer.toString(port), "-U", "postgres"));
        cmd.addAll(args);
        cmd.add("postgres");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(timeoutS, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("pgbench timed out");
        }
        return new Result(p.exitValue(), output);
    }

    private static void pgbench(int port, List<String> args, int timeoutS) throws Exception {
        Result r = run(port, args, timeoutS);
        if (r.exit != 0) throw new IllegalStateException("pgbench " + String.join(" ", args) + " failed:\n" + r.output);
    }

    private static Connection connect(int port) throws Exception {
        Properties p = new Properties();
        p.setProperty("user", "postgres");
        p.setProperty("preferQueryMode", "simple");
        return DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + port + "/postgres", p);
    }

    // ---- the peers as child processes

    /** A child server process on {@code port}, stopped (SIGTERM, then SIGKILL) on close. */
    static final class Child implements AutoCloseable {
        final Process process;
        final int port;
        final Path log;

        Child(List<String> cmd, Path dir, int port, Path log) throws IOException, InterruptedException {
            this.port = port;
            this.log = log;
            this.process = new ProcessBuilder(asPostgres(cmd)).directory(dir.toFile()).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (true) {
                try (Socket s = new Socket("127.0.0.1", port)) {
                    return;
                } catch (IOException notYet) {
                    if (!process.isAlive() || System.nanoTime() > end) {
                        close();
                        throw new IOException(cmd.get(0) + " did not start on port " + port + ":\n" + Files.readString(log));
                    }
                    Thread.sleep(100);
                }
            }
        }

        @Override public void close() throws InterruptedException {
            // runuser passes SIGTERM on to its child
            process.destroy();
            if (!process.waitFor(20, TimeUnit.SECONDS)) process.destroyForcibly();
            process.descendants().forEach(ProcessHandle::destroyForcibly);
        }
    }

    private static boolean isRoot() { return "root".equals(System.getProperty("user.name")); }

    private static List<String> asPostgres(List<String> cmd) {
        if (!isRoot()) return cmd;
        List<String> out = new ArrayList<>(List.of("runuser", "-u", "postgres", "--"));
        out.addAll(cmd);
        return out;
    }

    private static Path ownDir(Path dir) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        if (isRoot()) {
            Process p = new ProcessBuilder("chown", "-R", "postgres:postgres", dir.getParent().toString()).inheritIO().start();
            if (p.waitFor() != 0) throw new IOException("chown " + dir + " failed");
        }
        return dir;
    }

    static String binary(String name, String... candidates) {
        for (String c : candidates)
            if (Files.isExecutable(Path.of(c))) return c;
        throw new IllegalStateException(name + " is not installed (Debian package " + name + "; ./wanrep peer-bench installs it)");
    }

    private Child pgbouncer(Path dir, int pgPort) throws Exception {
        ownDir(dir);
        int port = LocalPostgres.freePort();
        Files.writeString(dir.resolve("userlist.txt"), "\"postgres\" \"\"\n");
        Files.writeString(dir.resolve("pgbouncer.ini"), String.join("\n",
                "[databases]",
                "postgres = host=127.0.0.1 port=" + pgPort + " dbname=postgres",
                "[pgbouncer]",
                "listen_addr = 127.0.0.1",
                "listen_port = " + port,
                "unix_socket_dir = " + dir,
                "auth_type = trust",
                "auth_file = " + dir.resolve("userlist.txt"),
                "pool_mode = session",
                "max_client_conn = 200",
                "default_pool_size = " + Math.max(20, clients + 4),
                "pidfile = " + dir.resolve("pgbouncer.pid"),
                "ignore_startup_parameters = extra_float_digits",
                ""));
        ownDir(dir);
        return new Child(List.of(binary("pgbouncer", "/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"), dir.resolve("pgbouncer.ini").toString()),
                dir, port, dir.resolve("pgbouncer.log"));
    }

    private Child pgpool(Path dir, List<LocalPostgres> backends) throws Exception {
        ownDir(dir);
        int port = LocalPostgres.freePort(), pcpPort = LocalPostgres.freePort();
        List<String> conf = new ArrayList<>(List.of(
                // pgpool-II 4.2+ names the mode here (older: replication_mode = on)
                "backend_clustering_mode = 'native_replication'",
                "listen_addresses = '127.0.0.1'",
                "port = " + port,
                "socket_dir = '" + dir + "'",
                "pcp_listen_addresses = '127.0.0.1'",
                "pcp_port = " + pcpPort,
                "pcp_socket_dir = '" + dir + "'",
                "enable_pool_hba = off",
                "pool_passwd = ''",
                "num_init_children = " + Math.max(32, clients + 8),
                "max_pool = 4",
                "pid_file_name = '" + dir.resolve("pgpool.pid") + "'",
                "logdir = '" + dir + "'",
                "log_destination = 'stderr'",
                "load_balance_mode = on",
                "replicate_select = off",
                "replication_stop_on_mismatch = off",
                "failover_on_backend_error = off",
                "health_check_period = 0",
                "sr_check_period = 0",
                "use_watchdog = off",
                "wd_ipc_socket_dir = '" + dir + "'",
                "memory_cache_enabled = off",
                "memqcache_oiddir = '" + dir.resolve("oiddir") + "'"));
        for (int i = 0; i < backends.size(); i++) {
            conf.add("backend_hostname" + i + " = '127.0.0.1'");
            conf.add("backend_port" + i + " = " + backends.get(i).port());
            conf.add("backend_weight" + i + " = 1");
            conf.add("backend_data_directory" + i + " = '" + backends.get(i).dataDir() + "'");
            conf.add("backend_flag" + i + " = 'DISALLOW_TO_FAILOVER'");
        }
        Files.writeString(dir.resolve("pgpool.conf"), String.join("\n", conf) + "\n");
        Files.writeString(dir.resolve("pcp.conf"), "");
        Files.writeString(dir.resolve("pool_hba.conf"), "host all all 127.0.0.1/32 trust\nlocal all all trust\n");
        ownDir(dir);
        return new Child(List.of(binary("pgpool2", "/usr/sbin/pgpool", "/usr/bin/pgpool"), "-n", "-f", dir.resolve("pgpool.conf").toString(),
                "-F", dir.resolve("pcp.conf").toString(), "-a", dir.resolve("pool_hba.conf").toString()), dir, port, dir.resolve("pgpool.log"));
    }

    private static void deleteTree(Path root) {
        try (var s = Files.walk(root)) {
            s.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // a temporary directory
        }
    }

    // ---- reporting

    public static String table(List<Run> runs) {
        // per system: tps, (ratio to direct), failed transactions; "!" where pgbench stopped early (see the JSON's note)
        List<String> present = present(runs);
        StringBuilder b = new StringBuilder(String.format("%-42s", ""));
        for (String s : present) b.append(String.format(" %-31s", s));
        b.append(String.format("%n%-42s", "workload"));
        for (int i = 0; i < present.size(); i++) b.append(String.format(" %8s %6s %6s %7s ", "tps", "ratio", "failed", "cpu/tx"));
        b.append('\n');
        byWorkload(runs).forEach((w, rs) -> {
            double direct = rs.stream().filter(r -> r.system().equals("direct")).mapToDouble(Run::tps).findFirst().orElse(Double.NaN);
            b.append(String.format("%-42s", w));
            for (Run r : rs) b.append(String.format(" %8.0f %6.2f %6d %5.0fus%s", r.tps(), r.tps() / direct, r.failed(), r.cpuMicrosPerTxn(), r.note().isEmpty() ? " " : "!"));
            b.append('\n');
        });
        return b.toString();
    }

    /** The runs by workload, in the order they ran (a table's rows). */
    private static Map<String, List<Run>> byWorkload(List<Run> runs) {
        Map<String, List<Run>> out = new LinkedHashMap<>();
        for (Run r : runs) out.computeIfAbsent(r.workload(), k -> new ArrayList<>()).add(r);
        return out;
    }

    /** The systems that ran, in {@link #SYSTEMS}' order (the columns of the tables). */
    static List<String> present(List<Run> runs) {
        return SYSTEMS.stream().filter(s -> runs.stream().anyMatch(r -> r.system().equals(s))).toList();
    }

    /** CPU per committed transaction by component: the PostgreSQL servers, the middleware, the rest (pgbench, the kernel's share, other work). */
    public static String cpuTable(List<Run> runs) {
        List<String> present = present(runs);
        StringBuilder b = new StringBuilder(String.format("%-42s", "CPU per transaction (us)"));
        for (String s : present) b.append(String.format(" %-24s", s));
        b.append(String.format("%n%-42s", "workload"));
        for (int i = 0; i < present.size(); i++) b.append(String.format(" %7s %7s %7s  ", "servers", "middle", "rest"));
        b.append('\n');
        byWorkload(runs).forEach((w, rs) -> {
            b.append(String.format("%-42s", w));
            for (Run r : rs) b.append(String.format(" %7.0f %7.0f %7.0f  ", r.serversMicrosPerTxn(), r.middlewareMicrosPerTxn(),
                    r.cpuMicrosPerTxn() - r.serversMicrosPerTxn() - r.middlewareMicrosPerTxn()));
            b.append('\n');
        });
        return b.toString();
    }

    /**
     * wanrep's JVM (its three sites) by thread group: CPU microseconds and voluntary context switches (wake-ups) per
     * transaction, the top {@code rows} groups, then the totals per layer (see {@link #layer}).
     */
    public static String threadTable(Map<String, Map<String, double[]>> byWorkload, int rows) {
        StringBuilder b = new StringBuilder();
        byWorkload.forEach((w, groups) -> {
            b.append(String.format("wanrep's threads, %s%n%-24s %10s %10s%n", w, "thread group", "cpu us/tx", "wakes/tx"));
            Map<String, double[]> layers = new LinkedHashMap<>();
            for (String l : LAYERS) layers.put(l, new double[2]);
            int n = 0;
            for (Map.Entry<String, double[]> e : groups.entrySet()) {
                double[] l = layers.get(layer(e.getKey()));
                l[0] += e.getValue()[0];
                l[1] += e.getValue()[1];
                if (n < rows && shown(e.getValue())) {
                    b.append(String.format("%-24s %10.0f %10.2f%n", e.getKey(), e.getValue()[0], e.getValue()[1]));
                    n++;
                }
            }
            double cpu = 0, wakes = 0;
            for (Map.Entry<String, double[]> l : layers.entrySet()) {
                cpu += l.getValue()[0];
                wakes += l.getValue()[1];
                if (shown(l.getValue())) b.append(String.format("%-24s %10.0f %10.2f%n", "= " + l.getKey(), l.getValue()[0], l.getValue()[1]));
            }
            b.append(String.format("%-24s %10.0f %10.2f%n", "= all threads", cpu, wakes));
        });
        return b.toString();
    }

    /** Whether a group's figures are worth a row: at least 0.5 us or 0.005 wake-ups per transaction. */
    private static boolean shown(double[] v) { return v[0] >= 0.5 || v[1] >= 0.005; }

    static final List<String> LAYERS = List.of("client sessions", "executors", "group communication", "JVM (JIT, GC)", "other");

    /** The layer a thread group belongs to, by the names our threads, JGroups' and HotSpot's carry (15 characters at most). */
    static String layer(String group) {
        if (group.startsWith("wanrep-client")) return "client sessions";
        if (group.startsWith("wanrep-exec")) return "executors";
        if (group.startsWith("Connection.Rece") || group.startsWith("wan-delay") || group.startsWith("gcs-") || group.startsWith("jgroups")
                || group.startsWith("pd-bundler") || group.startsWith("Timer runner") || group.startsWith("TQ-Bundler")) return "group communication";
        if (group.startsWith("C#") || group.startsWith("GC Thread") || group.startsWith("G#")
                || group.equals("VM Thread") || group.startsWith("VM Periodic") || group.startsWith("Monitor Deflati")) return "JVM (JIT, GC)";
        return "other";
    }

    public static String csv(List<Run> runs) {
        StringBuilder b = new StringBuilder("workload,system,tps,ratio,ceiling_share,failed,cpu_us_per_txn,switches_per_txn,servers_cpu_us_per_txn,middleware_cpu_us_per_txn,note\n");
        for (Run r : runs) {
            double share = ceilingShare(runs, r);
            b.append(String.format("\"%s\",%s,%.1f,%.3f,%s,%d,%.0f,%.1f,%.0f,%.0f,\"%s\"%n", r.workload(), r.system(), r.tps(), ratio(runs, r),
                    Double.isNaN(share) ? "" : String.format("%.3f", share), r.failed(), r.cpuMicrosPerTxn(),
                    r.switchesPerTxn(), r.serversMicrosPerTxn(), r.middlewareMicrosPerTxn(), r.note().replace("\"", "'")));
        }
        return b.toString();
    }

    private static double ratio(List<Run> runs, Run r) {
        return runs.stream().filter(x -> x.workload().equals(r.workload()) && x.system().equals("direct")).mapToDouble(x -> r.tps() / x.tps()).findFirst().orElse(Double.NaN);
    }

    /** The replicated systems, whose tps can be set against the three-replica ceiling. */
    static final List<String> REPLICATED = List.of("pgpool-II", "wanrep");

    /** A replicated system's tps over {@link #CEILING}'s in the same workload; NaN for the others or without a ceiling run. */
    static double ceilingShare(List<Run> runs, Run r) {
        if (!REPLICATED.contains(r.system())) return Double.NaN;
        return runs.stream().filter(x -> x.workload().equals(r.workload()) && x.system().equals(CEILING)).mapToDouble(x -> r.tps() / x.tps()).findFirst().orElse(Double.NaN);
    }

    /** Per workload, each replicated system's share of the ceiling (empty when {@link #CEILING} did not run). */
    public static String ceilingTable(List<Run> runs) {
        List<String> shown = REPLICATED.stream().filter(s -> runs.stream().anyMatch(r -> r.system().equals(s))).toList();
        if (shown.isEmpty() || runs.stream().noneMatch(r -> r.system().equals(CEILING))) return "";
        StringBuilder b = new StringBuilder(String.format("%-42s", "share of the ceiling (" + CEILING + ")"));
        for (String s : shown) b.append(String.format(" %10s", s));
        b.append('\n');
        byWorkload(runs).forEach((w, rs) -> {
            b.append(String.format("%-42s", w));
            for (String s : shown) {
                double share = rs.stream().filter(r -> r.system().equals(s)).mapToDouble(r -> ceilingShare(runs, r)).findFirst().orElse(Double.NaN);
                b.append(Double.isNaN(share) ? String.format(" %10s", "-") : String.format(" %10.2f", share));
            }
            b.append('\n');
        });
        return b.toString();
    }

    public static String json(List<Run> runs, int clients, int scale, int seconds, Map<String, String> replicas) throws Exception {
        return json(runs, clients, scale, seconds, replicas, Map.of());
    }

    public static String json(List<Run> runs, int clients, int scale, int seconds, Map<String, String> replicas,
                              Map<String, String> wanrepSettingsForJson) throws Exception {
        return json(runs, clients, scale, seconds, 0, replicas, wanrepSettingsForJson);
    }

    public static String json(List<Run> runs, int clients, int scale, int seconds, int warmup, Map<String, String> replicas,
                              Map<String, String> wanrepSettingsForJson) throws Exception {
        return json(runs, clients, scale, seconds, warmup, replicas, wanrepSettingsForJson, Map.of());
    }

    /** As above, with wanrep's JVM by thread group per workload ({@code wanrep_threads}: cpu_us and wakes per transaction). */
    public static String json(List<Run> runs, int clients, int scale, int seconds, int warmup, Map<String, String> replicas,
                              Map<String, String> wanrepSettingsForJson, Map<String, Map<String, double[]>> threads) throws Exception {
        return json(runs, clients, scale, seconds, warmup, replicas, wanrepSettingsForJson, threads, Map.of());
    }

    /** As above, with wanrep's warm-up beyond {@code warmup} per workload until its JIT compiler was quiet ({@code wanrep_jit_warmup_seconds}). */
    public static String json(List<Run> runs, int clients, int scale, int seconds, int warmup, Map<String, String> replicas,
                              Map<String, String> wanrepSettingsForJson, Map<String, Map<String, double[]>> threads,
                              Map<String, Integer> jitWarmup) throws Exception {
        return json(runs, clients, scale, seconds, warmup, replicas, wanrepSettingsForJson, threads, jitWarmup, Map.of());
    }

    /**
     * As above, with each round's runs per workload when there were several ({@code rounds}; the results are then their
     * combination, see {@link PeerRounds#combine}).
     */
    public static String json(List<Run> runs, int clients, int scale, int seconds, int warmup, Map<String, String> replicas,
                              Map<String, String> wanrepSettingsForJson, Map<String, Map<String, double[]>> threads,
                              Map<String, Integer> jitWarmup, Map<String, List<List<Run>>> rounds) throws Exception {
        List<Map<String, Object>> list = new ArrayList<>();
        for (Run r : runs) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("workload", r.workload());
            m.put("system", r.system());
            m.put("tps", Math.round(r.tps()));
            m.put("ratio", Math.round(ratio(runs, r) * 1000) / 1000.0);
            double share = ceilingShare(runs, r);
            if (!Double.isNaN(share)) m.put("ceiling_share", Math.round(share * 1000) / 1000.0);
            m.put("failed", r.failed());
            m.put("cpu_us_per_txn", Math.round(r.cpuMicrosPerTxn()));
            m.put("switches_per_txn", Math.round(r.switchesPerTxn() * 10) / 10.0);
            m.put("servers_cpu_us_per_txn", Math.round(r.serversMicrosPerTxn()));
            m.put("middleware_cpu_us_per_txn", Math.round(r.middlewareMicrosPerTxn()));
            if (!r.note().isEmpty()) m.put("note", r.note());
            list.add(m);
        }
        Map<String, Object> top = new LinkedHashMap<>();
        top.put("benchmark", "peer-bench");
        if (!wanrepSettingsForJson.isEmpty()) top.put("wanrep_settings", wanrepSettingsForJson);
        top.put("clients", clients);
        top.put("scale", scale);
        top.put("seconds", seconds);
        top.put("warmup_seconds", warmup);
        if (!jitWarmup.isEmpty()) top.put("wanrep_jit_warmup_seconds", jitWarmup);
        top.put("replicas", replicas);
        top.put("results", list);
        if (!rounds.isEmpty()) {
            Map<String, Object> r = new LinkedHashMap<>();
            rounds.forEach((w, rs) -> r.put(w, PeerRounds.json(rs)));
            top.put("rounds", r);
        }
        if (!threads.isEmpty()) {
            Map<String, Object> t = new LinkedHashMap<>();
            threads.forEach((w, groups) -> {
                Map<String, Object> g = new LinkedHashMap<>();
                groups.forEach((name, v) -> {
                    if (!shown(v)) return;
                    Map<String, Object> x = new LinkedHashMap<>();
                    x.put("cpu_us_per_txn", Math.round(v[0]));
                    x.put("wakes_per_txn", Math.round(v[1] * 100) / 100.0);
                    g.put(name, x);
                });
                t.put(w, g);
            });
            top.put("wanrep_threads", t);
        }
        return new ObjectMapper().writeValueAsString(top);
    }
}
