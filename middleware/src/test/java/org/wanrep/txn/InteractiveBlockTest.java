package org.wanrep.txn;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.wanrep.backend.BackendConnection;
import org.wanrep.backend.BackendTarget;
import org.wanrep.gcs.Delivery;
import org.wanrep.gcs.jgroups.GcsSettings;
import org.wanrep.gcs.jgroups.JGroupsGcs;
import org.wanrep.lock.TableSet;
import org.wanrep.pg.LocalPostgres;
import org.wanrep.wire.Messages;
import org.wanrep.wire.PgError;
import org.wanrep.wire.WireMessage;

import java.io.EOFException;
import java.io.IOException;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link InteractiveBlock} without a client socket: a real engine (one JGroups member), the block's session on a
 * real backend connection, faults injected into that connection. Whatever fails, the block's cluster lock must
 * not stay held: every other update of the cluster would wait for it for ever.
 */
class InteractiveBlockTest {
    static LocalPostgres pg;
    static BackendTarget target;
    ReplicationEngine engine;
    JGroupsGcs gcs;
    BackendConnection backend;

    @BeforeAll
    static void startPostgres() throws Exception {
        pg = LocalPostgres.startTemporary();
        target = new BackendTarget(pg.host(), pg.port(), "postgres", "");
        try (Connection c = pg.connect(); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE t (id int PRIMARY KEY)");
        }
        org.wanrep.exec.ReplicaPosition.prepare(target);   // the certified blocks' marks, as a site prepares its replica
    }

    @AfterAll
    static void stopPostgres() throws Exception {
        if (pg != null) pg.close();
    }

    @BeforeEach
    void startSite() throws Exception {
        engine = new ReplicationEngine("a", Delivery.AGREED, ReplicationEngineViewTest.UNUSED);
        gcs = JGroupsGcs.start(GcsSettings.loopback("block-" + System.nanoTime(), "a", List.of("a"), GcsSettings.freePorts(1), null), engine);
        engine.attach(gcs);
        gcs.awaitPrimary(1, Duration.ofSeconds(30));
        backend = BackendConnection.open(target, "postgres", Map.of());
    }

    @AfterEach
    void stopSite() {
        if (backend != null) backend.close();
        if (gcs != null) gcs.close();
    }

    /** The session of a block on a real backend: what it would send the client is kept in {@link #toClient}. */
    class BackendSession implements InteractiveBlock.Session {
        final List<WireMessage> toClient = new ArrayList<>();
        /** Run on the backend's PostgreSQL process before a request whose first message is this text's Query is relayed. */
        Consumer<String> beforeRelay = sql -> { };
        /** Run before the block runs this text on the backend itself. */
        Consumer<String> beforeRun = sql -> { };

        @Override public char status() { return backend.status(); }
        @Override public void deferBegin() { backend.deferBegin(); }
        @Override public PgError run(String sql) throws IOException {
            beforeRun.accept(sql);
            return backend.run(sql);
        }
        @Override public PgError runCollecting(String sql, Consumer<List<String>> rows) throws IOException {
            return backend.runCollecting(sql, rows);
        }
        @Override public List<InteractiveBlock.Ran> runEach(List<String> queries) throws IOException {
            for (String q : queries) beforeRun.accept(q);
            return backend.runEach(queries).stream().map(r -> new InteractiveBlock.Ran(r.tags(), r.error())).toList();
        }
        @Override public InteractiveBlock.Relayed relay(List<WireMessage> unit, List<WireMessage> buffer) throws IOException {
            beforeRelay.accept(unit.get(0).queryText());
            for (WireMessage m : unit) backend.send(m);
            backend.flush();
            PgError err = null;
            String tag = null;
            while (!backend.tracker().idle()) {
                WireMessage m = backend.read();
                if (m.kind() == 'E' && err == null) err = PgError.parse(m);
                if (m.kind() == 'C') tag = Messages.commandTag(m);
                (buffer != null ? buffer : toClient).add(m);
            }
            return new InteractiveBlock.Relayed(unit, err, tag);
        }
        @Override public void toClient(List<WireMessage> messages) { toClient.addAll(messages); }
        @Override public void replyError(List<WireMessage> unit, PgError e) { toClient.add(e.toMessage()); }
        @Override public void answerUnrelayed(List<WireMessage> unit, PgError e) { toClient.add(e.toMessage()); }
        @Override public List<WireMessage> selfContained(List<WireMessage> messages, Set<String> defined) { return messages; }
        @Override public String timeAndSeedSql(long timestampMicros, long seed) { return "pg_catalog.setseed(0.5)"; }
        @Override public void ensurePositionTable() { }
        @Override public void catalogChanged() { }
        @Override public String site() { return "a"; }
        @Override public String orderKey() { return "a/1"; }
        @Override public boolean advancesSequence(org.wanrep.lock.TableSet tables) { return tables.all(); }   // table t has no sequence
        @Override public String sequenceStatesSql() { return org.wanrep.exec.WriteSetSql.sequenceStates(org.wanrep.lock.TableSet.allTables()); }
        @Override public void putBackSequences(String setvals) throws IOException { run("SELECT " + setvals); }
        @Override public InteractiveBlock.WriteSets writeSets() { return null; }
    }

    private InteractiveBlock begin(BackendSession s) throws IOException {
        long commits = engine.localCommits(), snapshot = engine.committedThrough();
        s.relay(List.of(WireMessage.query("BEGIN")), null);
        return InteractiveBlock.begin(engine, s, "postgres", commits, snapshot, List.of("BEGIN"), TableSet.of(Set.of(), Set.of()));
    }

    private static List<WireMessage> query(String sql) { return List.of(WireMessage.query(sql)); }

    private static final TableSet WRITES_T = TableSet.of(Set.of(), Set.of("public.t"));

    /** Whether nothing holds the all-tables lock: a local lock on every table is granted within a few seconds. */
    private boolean clusterLockFree() throws InterruptedException { return clusterLockFree(Duration.ofSeconds(5)); }

    private boolean clusterLockFree(Duration wait) throws InterruptedException {
        try {
            engine.unlockLocal(engine.lockLocal(TableSet.allTables(), wait));
            return true;
        } catch (java.util.concurrent.TimeoutException e) {
            return false;
        }
    }

    private void terminateBackend() {
        try (Connection c = pg.connect(); Statement st = c.createStatement()) {
            st.execute("SELECT pg_terminate_backend(" + backend.pid() + ")");
        } catch (java.sql.SQLException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void anExclusiveLockWhoseWaitIsInterruptedIsReleasedOnceGranted() throws Exception {
        BackendSession s = new BackendSession();
        InteractiveBlock b = begin(s);
        Object other = engine.lockLocal(TableSet.allTables(), Duration.ofSeconds(5));   // the block's EXCLUSIVE queues behind it
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread writer = Thread.ofPlatform().start(() -> {
            try {
                b.update(query("INSERT INTO t VALUES (1)"), List.of("INSERT INTO t VALUES (1)"), WRITES_T, false);
            } catch (Throwable e) {
                thrown.set(e);
            }
        });
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (engine.pending() == 0 && System.nanoTime() < end) Thread.sleep(10);   // its EXCLUSIVE was delivered
        assertThat(engine.pending()).isEqualTo(1);
        writer.interrupt();   // the session's thread is stopped while it waits for the grant
        writer.join(10_000);
        assertThat(thrown.get()).isInstanceOf(EOFException.class);
        b.abandon();   // the session ends
        engine.unlockLocal(other);   // now the EXCLUSIVE is granted: the block must let it go
        assertThat(clusterLockFree()).as("the interrupted block's exclusive lock was released").isTrue();
    }

    @Test
    void aConnectionLostAtCommitStopsTheSiteAndReleasesTheLock() throws Exception {
        BackendSession s = new BackendSession();
        CompletableFuture<String> stopped = new CompletableFuture<>();
        engine.onFatal(stopped::complete);
        InteractiveBlock b = begin(s);
        b.update(query("INSERT INTO t VALUES (2)"), List.of("INSERT INTO t VALUES (2)"), WRITES_T, false);   // takes the exclusive lock
        assertThat(clusterLockFree(Duration.ofMillis(500))).isFalse();
        s.beforeRelay = sql -> { if (sql.equals("COMMIT")) terminateBackend(); };
        assertThatThrownBy(() -> b.commit(query("COMMIT"), Map.of())).isInstanceOf(IOException.class);
        // the others commit the delivered log; whether this replica did is unknown: the site stops, and lets the lock go
        assertThat(stopped.get(5, TimeUnit.SECONDS)).contains("during COMMIT of block");
        assertThat(b.ended()).isTrue();
        assertThat(clusterLockFree()).as("the block's lock ended with its COMMIT").isTrue();
    }

    @Test
    void aCertifiedBlockWhoseCommitPreparedFailsStopsTheSiteReleasesItsLocksAndStaysPrepared() throws Exception {
        engine.certification(true, 1000);
        BackendSession s = new BackendSession();
        CompletableFuture<String> stopped = new CompletableFuture<>();
        engine.onFatal(stopped::complete);
        InteractiveBlock b = begin(s);
        assertThat(b.certifying()).isTrue();
        b.update(query("INSERT INTO t VALUES (3)"), List.of("INSERT INTO t VALUES (3)"), WRITES_T, false);   // no cluster lock: it certifies at COMMIT
        assertThat(clusterLockFree()).isTrue();
        s.beforeRun = sql -> { if (sql.contains("COMMIT PREPARED")) terminateBackend(); };
        try {
            assertThatThrownBy(() -> b.commit(query("COMMIT"), Map.of())).isInstanceOf(IOException.class);
            assertThat(stopped.get(5, TimeUnit.SECONDS)).contains("resolving prepared block");
            assertThat(clusterLockFree()).as("the certified block's locks ended with its COMMIT").isTrue();
            assertThat(prepared()).as("its outcome is left to recovery, not guessed").hasSize(1);
        } finally {
            for (String gid : prepared())
                try (Connection c = pg.connect(); Statement st = c.createStatement()) { st.execute("ROLLBACK PREPARED '" + gid + "'"); }
        }
    }

    /**
     * The resolution of a certified block cancelled before it did anything (the client's statement_timeout, or a cancel
     * request, landing on COMMIT PREPARED): it goes again with the session's timeout lifted, commits, and puts the
     * timeout back; the site goes on. The cancel is PostgreSQL's own: the first COMMIT PREPARED is sent as a statement
     * that the session's statement_timeout cancels (57014), so nothing of the resolution ran.
     */
    @Test
    void aCancelledCommitPreparedGoesAgainWithTheTimeoutLiftedAndCommits() throws Exception {
        engine.certification(true, 1000);
        CompletableFuture<String> stopped = new CompletableFuture<>();
        engine.onFatal(stopped::complete);
        boolean[] cancelled = {false};
        List<List<String>> resolutions = new ArrayList<>();
        BackendSession s = new BackendSession() {
            @Override public List<InteractiveBlock.Ran> runEach(List<String> queries) throws IOException {
                resolutions.add(queries);
                if (cancelled[0] || queries.stream().noneMatch(q -> q.startsWith("COMMIT PREPARED"))) return super.runEach(queries);
                cancelled[0] = true;
                // the client's timeout, set after the block's BEGIN read it as 0 (so the first attempt does not lift it)
                assertThat(backend.run("SET statement_timeout = '50ms'")).isNull();
                List<String> sent = queries.stream().map(q -> q.startsWith("COMMIT PREPARED") ? "SELECT pg_catalog.pg_sleep(5)" : q).toList();
                return super.runEach(sent);
            }
        };
        InteractiveBlock b = begin(s);
        b.update(query("INSERT INTO t VALUES (5)"), List.of("INSERT INTO t VALUES (5)"), WRITES_T, false);
        try {
            b.commit(query("COMMIT"), Map.of());
            assertThat(cancelled[0]).as("the first resolution was cancelled").isTrue();
            assertThat(resolutions).hasSize(2);
            assertThat(resolutions.get(0)).as("first: without lifting the timeout (it was 0 at BEGIN)").hasSize(1);
            assertThat(resolutions.get(1)).as("again: lifted, resolved, put back").hasSize(3);
            assertThat(resolutions.get(1).get(InteractiveBlock.resolutionIndex(true))).startsWith("COMMIT PREPARED");
            List<WireMessage> answer = s.toClient.subList(s.toClient.size() - 2, s.toClient.size());   // after BEGIN's and INSERT's
            assertThat(answer).extracting(WireMessage::kind).containsExactly('C', 'Z');
            assertThat(Messages.commandTag(answer.get(0))).isEqualTo("COMMIT");
            assertThat(s.toClient).extracting(WireMessage::kind).doesNotContain('E');
            assertThat(prepared()).as("nothing left prepared").isEmpty();
            try (Connection c = pg.connect(); Statement st = c.createStatement(); java.sql.ResultSet r = st.executeQuery("SELECT count(*) FROM t WHERE id = 5")) {
                r.next();
                assertThat(r.getInt(1)).as("the block committed").isEqualTo(1);
            }
            List<String> timeout = new ArrayList<>();
            assertThat(backend.runCollecting("SHOW statement_timeout", timeout::addAll)).isNull();
            assertThat(timeout).as("the session's statement_timeout put back").containsExactly("50ms");
            assertThat(stopped).as("the site goes on").isNotDone();
            assertThat(backend.status()).isEqualTo('I');
        } finally {
            for (String gid : prepared())
                try (Connection c = pg.connect(); Statement st = c.createStatement()) { st.execute("ROLLBACK PREPARED '" + gid + "'"); }
        }
    }

    @Test
    void aConnectionLostAtPrepareStopsTheSite() throws Exception {
        engine.certification(true, 1000);
        BackendSession s = new BackendSession();
        CompletableFuture<String> stopped = new CompletableFuture<>();
        engine.onFatal(stopped::complete);
        InteractiveBlock b = begin(s);
        b.update(query("INSERT INTO t VALUES (4)"), List.of("INSERT INTO t VALUES (4)"), WRITES_T, false);
        s.beforeRun = sql -> { if (sql.contains("PREPARE TRANSACTION")) terminateBackend(); };
        assertThatThrownBy(() -> b.commit(query("COMMIT"), Map.of())).isInstanceOf(IOException.class);
        // a transaction left prepared would hold its rows here for ever, and nobody knows whether there is one
        assertThat(stopped.get(5, TimeUnit.SECONDS)).contains("during PREPARE TRANSACTION");
        assertThat(b.ended()).isTrue();
        assertThat(clusterLockFree()).isTrue();
    }

    private static List<String> prepared() throws java.sql.SQLException {
        List<String> out = new ArrayList<>();
        try (Connection c = pg.connect(); Statement st = c.createStatement();
             java.sql.ResultSet r = st.executeQuery("SELECT gid FROM pg_prepared_xacts WHERE gid LIKE 'wanrep:%'")) {
            while (r.next()) out.add(r.getString(1));
        }
        return out;
    }
}
