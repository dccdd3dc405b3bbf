package org.wanrep.emulator;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.wanrep.emulator.report.ResultFiles;
import org.wanrep.emulator.report.RunResult;
import org.wanrep.emulator.report.SiteResult;
import org.wanrep.emulator.report.SummaryTable;
import org.wanrep.emulator.report.TypeResult;
import org.wanrep.emulator.synthetic.SyntheticWorkload;
import org.wanrep.emulator.workload.SqlTransaction;
import org.wanrep.emulator.workload.Transaction;
import org.wanrep.emulator.workload.Workload;
import org.wanrep.pg.LocalPostgres;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** The emulator against a real PostgreSQL server (no proxy): schedule, discards, late starts, errors, files. */
class EmulatorTest {
    static LocalPostgres pg;

    @BeforeAll static void start() throws Exception { pg = LocalPostgres.startTemporary(); }

    @AfterAll static void stop() throws Exception { if (pg != null) pg.close(); }

    static SiteTarget target(String name) { return SiteTarget.of(name, pg.host(), pg.port(), "postgres"); }

    static TypeResult type(SiteResult s, String t) { return s.types().stream().filter(x -> x.type().equals(t)).findFirst().orElseThrow(); }

    @Test void openLoopAtAModestRateKeepsTheRateDiscardsExactlyAndWritesFiles(@TempDir Path out) throws Exception {
        long seed = new Random().nextLong();
        System.out.println("EmulatorTest seed " + seed);
        SyntheticWorkload w = new SyntheticWorkload(2, 200, 0.5, 10);
        List<SiteTarget> targets = List.of(target("a"), target("b"));
        EmulatorConfig cfg = EmulatorConfig.builder(w, new Load.Open(120, Arrivals.FIXED)).transactions(150).connections(4).seed(seed).build();
        DataLoad.throughFirstSite(w, targets, cfg.connectionProperties(), System.out);

        RunResult r = new EmulatorGroup(targets, cfg, System.out, Duration.ofSeconds(1)).run();
        System.out.print(SummaryTable.of(r));

        assertThat(r.sites()).hasSize(2);
        for (SiteResult s : r.sites()) {
            assertThat(s.transactions()).isEqualTo(150);
            assertThat(s.discardedWarmup()).isEqualTo(15);
            assertThat(s.discardedCooldown()).isEqualTo(15);
            assertThat(s.unfinished()).isZero();
            assertThat(s.all().measured()).isEqualTo(120);
            assertThat(s.all().committed()).isEqualTo(120);
            assertThat(type(s, "update").measured() + type(s, "query").measured()).isEqualTo(120);
            assertThat(s.all().aborts()).isZero();
            assertThat(s.targetRateTps()).isEqualTo(60.0);
            assertThat(s.achievedRateTps()).isCloseTo(60.0, within(6.0));
            assertThat(s.all().throughputTps()).isCloseTo(60.0, within(15.0));
            assertThat(s.phases()).isEmpty();
            assertThat(s.phasesNote()).contains("not a wanrep proxy");
        }
        assertThat(r.allSites().all().measured()).isEqualTo(240);
        assertThat(r.allSites().achievedRateTps()).isCloseTo(120.0, within(12.0));

        // every committed update ran its 10 statements (warm-up and cool-down ones too)
        long updates = 0;
        long[] counted = new long[1];
        try (Connection c = pg.connect(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT (SELECT sum(v) FROM synth_1) + (SELECT sum(v) FROM synth_2)")) {
            rs.next();
            counted[0] = rs.getLong(1);
        }
        for (SiteResult s : r.sites()) updates += type(s, "update").committed();
        assertThat(counted[0]).isGreaterThanOrEqualTo(10 * updates);   // measured ones only are counted in `updates`

        List<Path> files = ResultFiles.write(r, out);
        assertThat(files).allMatch(Files::isRegularFile);
        JsonNode json = ResultFiles.JSON.readTree(out.resolve("results.json").toFile());
        assertThat(json.get("sites").get(0).get("all").get("measured").asLong()).isEqualTo(120);
        assertThat(json.get("settings").get("seed").asLong()).isEqualTo(seed);
        assertThat(json.get("sites").get(1).get("discarded_cooldown").asLong()).isEqualTo(15);
        List<String> csv = Files.readAllLines(out.resolve("results.csv"));
        assertThat(csv.get(0)).startsWith("site,type,measured");
        assertThat(csv).hasSize(1 + 3 * 3);   // (update, query, all) for a, b and all sites
        assertThat(Files.readAllLines(out.resolve("sites.csv"))).hasSize(1 + 3);
    }

    @Test void startsWaitingForAConnectionAreLateAndTheirWaitCountsInTheResponseTime() throws Exception {
        Workload sleepy = new TestWorkload(List.of("sleep"), (k, attempt) -> "SELECT pg_sleep(0.05)");
        EmulatorConfig cfg = EmulatorConfig.builder(sleepy, new Load.Open(50, Arrivals.FIXED)).transactions(20).warmupFraction(0).connections(1).build();
        SiteResult s = runOne(cfg);
        // one 50 ms transaction at a time, one due every 20 ms: from the second one on, every start is late
        assertThat(s.lateStartsAll()).isGreaterThanOrEqualTo(18);
        assertThat(s.all().lateStarts()).isEqualTo(s.lateStartsAll());
        assertThat(s.all().lagP99Ms()).isGreaterThan(400);
        assertThat(s.all().maxMs()).isGreaterThan(s.all().lagMaxMs());
        assertThat(s.all().committed()).isEqualTo(20);
        assertThat(s.achievedRateTps()).isLessThan(25);   // the server could only take 20/s
    }

    @Test void aWatchdogStopsASaturatedRunWithoutWaitingForItsSchedule() throws Exception {
        // 200 ms transactions due every 20 ms on 2 connections: the queue grows from the start
        Workload slow = new TestWorkload(List.of("slow"), (k, attempt) -> "SELECT pg_sleep(0.2)");
        EmulatorConfig cfg = EmulatorConfig.builder(slow, new Load.Open(50, Arrivals.FIXED)).transactions(500).connections(2).build();
        long t0 = System.nanoTime();
        RunResult r = new EmulatorGroup(List.of(target("solo")), cfg, System.out, Duration.ofSeconds(1))
                .run((p, s) -> p.waiting() > 20 ? p.waiting() + " waiting for a connection" : null);
        double seconds = (System.nanoTime() - t0) / 1e9;
        assertThat(seconds).isLessThan(6);   // the schedule alone lasts 10 s
        assertThat(r.settings().get("stopped").toString()).contains("waiting for a connection");
        assertThat(r.sites().get(0).unfinished()).isGreaterThan(400);
    }

    @Test void serializationFailuresAreRetriedAndOtherErrorsAbortWithTheirMessage() throws Exception {
        String fail40001 = "DO $$BEGIN RAISE EXCEPTION USING ERRCODE = '40001', MESSAGE = 'test serialization failure'; END$$";
        String fail40P01 = "DO $$BEGIN RAISE EXCEPTION USING ERRCODE = '40P01', MESSAGE = 'test deadlock'; END$$";
        Workload w = new TestWorkload(List.of("flaky", "deadlocked", "broken", "hopeless"), (type, attempt) -> switch (type) {
            case "flaky" -> attempt == 0 ? fail40001 : "SELECT 1";
            case "deadlocked" -> attempt < 2 ? fail40P01 : "SELECT 1";
            case "broken" -> "SELECT 1/0";
            default -> fail40001;
        });
        EmulatorConfig cfg = EmulatorConfig.builder(w, new Load.Open(200, Arrivals.FIXED)).transactions(40).warmupFraction(0).connections(2)
                .maxRetries(3).build();
        SiteResult s = runOne(cfg);
        assertThat(type(s, "flaky")).satisfies(t -> {
            assertThat(t.committed()).isEqualTo(10);
            assertThat(t.retries()).isEqualTo(10);
            assertThat(t.aborts()).isZero();
        });
        assertThat(type(s, "deadlocked").retries()).isEqualTo(20);
        assertThat(type(s, "broken")).satisfies(t -> {
            assertThat(t.aborts()).isEqualTo(10);
            assertThat(t.retries()).isZero();
            assertThat(t.lastError()).contains("division by zero").contains("22012");
        });
        assertThat(type(s, "hopeless")).satisfies(t -> {
            assertThat(t.aborts()).isEqualTo(10);
            assertThat(t.retries()).isEqualTo(30);
            assertThat(t.lastError()).contains("gave up after 3 retries").contains("40001");
        });
        assertThat(s.all().aborts()).isEqualTo(20);
        assertThat(s.all().retries()).isEqualTo(60);
        assertThat(s.unfinished()).isZero();
    }

    @Test void closedLoopClientsThinkSubmitAndWait() throws Exception {
        AtomicInteger inFlight = new AtomicInteger(), most = new AtomicInteger();
        Workload w = new TestWorkload(List.of("q"), (t, a) -> "SELECT pg_sleep(0.01)") {
            @Override public Duration thinkTime(Random r) { return Duration.ofMillis(5); }

            @Override public Transaction next(Random r) {
                Transaction inner = super.next(r);
                return new Transaction() {
                    public String type() { return inner.type(); }
                    public boolean readOnly() { return true; }
                    public void execute(Connection c) throws SQLException {
                        most.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
                        try {
                            inner.execute(c);
                        } finally {
                            inFlight.decrementAndGet();
                        }
                    }
                };
            }
        };
        EmulatorConfig cfg = EmulatorConfig.builder(w, new Load.Closed(3, null)).transactions(60).connections(8).build();
        long t0 = System.nanoTime();
        SiteResult s = runOne(cfg);
        double seconds = (System.nanoTime() - t0) / 1e9;
        assertThat(s.targetRateTps()).isNull();
        assertThat(s.transactions()).isEqualTo(60);
        assertThat(s.all().measured()).isEqualTo(48);
        assertThat(s.all().committed()).isEqualTo(48);
        assertThat(most.get()).isLessThanOrEqualTo(3);   // three clients, each waiting for its answer
        assertThat(seconds).isGreaterThan(60 / 3 * 0.015);   // think + transaction, 20 times per client
    }

    /** Workloads with per-client state (DBT-1's emulated browsers) key it on the client's Random: one per client, for life. */
    @Test void everyClientDrawsFromOneRandomOfItsOwnForItsWholeLife() throws Exception {
        Map<String, Set<Random>> byThread = new ConcurrentHashMap<>();
        Workload w = new TestWorkload(List.of("q"), (t, a) -> "SELECT 1") {
            @Override public Duration thinkTime(Random r) {
                byThread.computeIfAbsent(Thread.currentThread().getName(), k -> ConcurrentHashMap.newKeySet()).add(r);
                return Duration.ofMillis(1);
            }

            @Override public Transaction next(Random r) {
                byThread.computeIfAbsent(Thread.currentThread().getName(), k -> ConcurrentHashMap.newKeySet()).add(r);
                return super.next(r);
            }
        };
        runOne(EmulatorConfig.builder(w, new Load.Closed(3, null)).transactions(30).connections(3).build());
        assertThat(byThread).hasSize(3);   // three client threads, each with one source for its think times and transactions
        assertThat(byThread.values()).allSatisfy(rs -> assertThat(rs).hasSize(1));
        assertThat(byThread.values().stream().flatMap(Set::stream).distinct()).hasSize(3);

        byThread.clear();
        runOne(EmulatorConfig.builder(w, new Load.Open(400, Arrivals.FIXED)).transactions(30).connections(3).build());
        assertThat(byThread.values().stream().flatMap(Set::stream).distinct()).as("an open-loop schedule is one client").hasSize(1);
    }

    private static SiteResult runOne(EmulatorConfig cfg) throws Exception {
        try (Emulator e = new Emulator(target("solo"), cfg)) {
            e.open();
            return e.run(System.nanoTime() + 50_000_000L);
        }
    }

    /** Types in turn; each transaction's SQL may depend on its attempt, to fail first and succeed later. */
    static class TestWorkload implements Workload {
        interface Sql { String of(String type, int attempt); }

        private final List<String> types;
        private final Sql sql;
        private int k;

        TestWorkload(List<String> types, Sql sql) {
            this.types = types;
            this.sql = sql;
        }

        @Override public String name() { return "test"; }
        @Override public void load(Connection c, PrintStream progress) { }
        @Override public List<String> types() { return types; }

        @Override public Transaction next(Random r) {
            String type = types.get(k++ % types.size());
            int[] attempt = {0};
            return new Transaction() {
                public String type() { return type; }
                public boolean readOnly() { return true; }
                public void execute(Connection c) throws SQLException {
                    new SqlTransaction(type, true, sql.of(type, attempt[0]++)).execute(c);
                }
            };
        }
    }
}
