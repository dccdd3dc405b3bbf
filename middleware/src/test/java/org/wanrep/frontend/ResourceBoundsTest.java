package org.wanrep.frontend;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Issue 15, bounded resources: message sizes before and after authentication, the site's budget for
 * buffered requests, huge SQL texts, idle and per-user limits, and one answer for unknown users and
 * wrong passwords. One single-site cluster for all of them.
 */
class ResourceBoundsTest {
    static final int IDLE_MS = 2000;
    static final int AUTH_MS = 3000;
    static TestCluster cluster;

    @BeforeAll
    static void start() throws Exception {
        cluster = new TestCluster(List.of("solo"), "none", Map.of("delivery", "safe",
                "users", "postgres:trust,carol:trust,dave:trust,alice:scram-sha-256:s3cret,bob:md5:hunter2",
                "proxy.max_message_mb", "64", "proxy.buffer_budget_mb", "100",
                "proxy.idle_session_timeout_ms", Integer.toString(IDLE_MS), "proxy.max_clients_per_user", "12",
                "proxy.authentication_timeout_ms", Integer.toString(AUTH_MS)));
        // the proxy's users log in to the replica as their own roles (proxy.session_role client)
        try (java.sql.Connection c = cluster.connect(0); java.sql.Statement st = c.createStatement()) {
            st.execute("CREATE ROLE alice LOGIN");
            st.execute("CREATE ROLE bob LOGIN");
            st.execute("CREATE ROLE carol LOGIN");
            st.execute("CREATE ROLE dave LOGIN");
        }
    }

    @AfterAll
    static void stop() throws Exception {
        if (cluster != null) cluster.close();
    }

    // ------------------------------------------------------------------ raw protocol helpers

    record Msg(char type, byte[] payload) {
        String fields() { return new String(payload, StandardCharsets.UTF_8); }
    }

    static Socket open() throws IOException {
        Socket s = new Socket("127.0.0.1", cluster.proxyPort(0));
        s.setSoTimeout(20_000);
        return s;
    }

    static byte[] startupPacket(String user) throws IOException {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        DataOutputStream b = new DataOutputStream(body);
        b.writeInt(196608);
        b.write(("user\0" + user + "\0database\0postgres\0\0").getBytes(StandardCharsets.US_ASCII));
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        new DataOutputStream(all).writeInt(body.size() + 4);
        all.write(body.toByteArray());
        return all.toByteArray();
    }

    static Msg read(DataInputStream in) throws IOException {
        char k = (char) in.readByte();
        byte[] p = new byte[in.readInt() - 4];
        in.readFully(p);
        return new Msg(k, p);
    }

    /** A trust session up to its first ReadyForQuery. */
    static Socket session(String user) throws IOException {
        Socket s = open();
        s.getOutputStream().write(startupPacket(user));
        DataInputStream in = new DataInputStream(s.getInputStream());
        while (true) {
            Msg m = read(in);
            if (m.type() == 'E') throw new IOException("refused: " + m.fields());
            if (m.type() == 'Z') return s;
        }
    }

    static void writeMessage(DataOutputStream out, char type, byte[] payload) throws IOException {
        out.writeByte(type);
        out.writeInt(payload.length + 4);
        out.write(payload);
    }

    static Connection connect(String user, String password) throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", user);
        if (password != null) p.setProperty("password", password);
        return DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + cluster.proxyPort(0) + "/postgres", p);
    }

    static void assertServes() throws SQLException {
        try (Connection c = connect("postgres", null); Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT 41 + 1")) {
            rs.next();
            assertThat(rs.getInt(1)).isEqualTo(42);
        }
    }

    // ------------------------------------------------------------------ tests

    @Test
    void aStartupPacketOverTenThousandBytesIsRefusedAsPostgresDoes() throws Exception {
        try (Socket s = open()) {
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            out.writeInt(10_001);
            out.writeInt(196608);
            out.flush();
            Msg m = read(new DataInputStream(s.getInputStream()));
            assertThat(m.type()).isEqualTo('E');
            assertThat(m.fields()).contains("C08P01").contains("invalid length of startup packet");
        }
        assertServes();
    }

    @Test
    void tenConnectionsDeclaringHugeMessagesDoNotStopANewSession() throws Exception {
        List<Socket> held = new ArrayList<>();
        try {
            // five before authentication (a SCRAM answer declaring 200 MB), ten after it (a Query declaring 200 MB),
            // and ten more declaring just under the maximum and sending nothing: all hold their sockets
            for (int i = 0; i < 5; i++) {
                Socket s = open();
                held.add(s);
                s.getOutputStream().write(startupPacket("alice"));
                DataInputStream in = new DataInputStream(s.getInputStream());
                assertThat(read(in).type()).isEqualTo('R');   // AuthenticationSASL
                DataOutputStream out = new DataOutputStream(s.getOutputStream());
                out.writeByte('p');
                out.writeInt(200 << 20);
                out.flush();
                Msg m = read(in);
                assertThat(m.fields()).contains("C08P01").contains("invalid message length");
            }
            for (int i = 0; i < 10; i++) {
                Socket s = session("postgres");
                held.add(s);
                DataOutputStream out = new DataOutputStream(s.getOutputStream());
                out.writeByte('Q');
                out.writeInt(200 << 20);
                out.write("SELECT '".getBytes(StandardCharsets.US_ASCII));
                out.flush();
                Msg m = read(new DataInputStream(s.getInputStream()));
                assertThat(m.type()).isEqualTo('E');
                assertThat(m.fields()).contains("SFATAL").contains("C54000");
            }
            for (int i = 0; i < 10; i++) {
                Socket s = session("dave");
                held.add(s);
                DataOutputStream out = new DataOutputStream(s.getOutputStream());
                out.writeByte('Q');
                out.writeInt((60 << 20) + 4);
                out.write("SELECT '".getBytes(StandardCharsets.US_ASCII));
                out.flush();
            }
            Thread.sleep(200);
            // a declared length costs nothing until its bytes arrive
            assertThat(cluster.site(0).proxy().limits().budget().used()).isLessThan(10L << 20);
            assertServes();
        } finally {
            for (Socket s : held) s.close();
        }
    }

    @Test
    void aFiftyMegabyteSelectIsAnsweredAndTheSessionGoesOn() throws Exception {
        int n = 50 << 20;
        byte[] q = ("SELECT length('" + "x".repeat(n) + "')\0").getBytes(StandardCharsets.US_ASCII);
        try (Socket s = session("postgres")) {   // raw: pgjdbc's own scan of such a text outlasts the idle timeout
            DataOutputStream out = new DataOutputStream(new java.io.BufferedOutputStream(s.getOutputStream(), 1 << 16));
            DataInputStream in = new DataInputStream(s.getInputStream());
            writeMessage(out, 'Q', q);
            q = null;
            out.flush();
            List<Msg> answers = new ArrayList<>();
            do answers.add(read(in)); while (answers.getLast().type() != 'Z');
            assertThat(answers).extracting(Msg::type).containsExactly('T', 'D', 'C', 'Z');
            assertThat(answers.get(1).fields()).contains(Integer.toString(n));
            writeMessage(out, 'Q', "SELECT 7\0".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            answers.clear();
            do answers.add(read(in)); while (answers.getLast().type() != 'Z');
            assertThat(answers).extracting(Msg::type).containsExactly('T', 'D', 'C', 'Z');
        }
        assertServes();
    }

    @Test
    void requestsPastTheBudgetGetOutOfMemoryAndTheSessionGoesOn() throws Exception {
        try (Socket s = session("postgres")) {
            DataOutputStream out = new DataOutputStream(new java.io.BufferedOutputStream(s.getOutputStream(), 1 << 16));
            DataInputStream in = new DataInputStream(s.getInputStream());
            byte[] text = ("SELECT '" + "y".repeat(40 << 20) + "'\0").getBytes(StandardCharsets.US_ASCII);
            // three Parse messages of 40 MB in one pipeline: 120 MB, over the 100 MB budget
            for (int i = 0; i < 3; i++) {
                ByteArrayOutputStream p = new ByteArrayOutputStream(text.length + 8);
                p.write(0);   // unnamed statement
                p.write(text);
                p.write(new byte[] {0, 0});
                writeMessage(out, 'P', p.toByteArray());
            }
            writeMessage(out, 'S', new byte[0]);
            out.flush();
            List<Msg> answers = new ArrayList<>();
            while (true) {
                Msg m = read(in);
                answers.add(m);
                if (m.type() == 'Z') break;
            }
            assertThat(answers).filteredOn(m -> m.type() == 'E').singleElement()
                    .satisfies(m -> assertThat(m.fields()).contains("C53200").contains("out of memory"));
            writeMessage(out, 'Q', "SELECT 5\0".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            List<Character> kinds = new ArrayList<>();
            while (true) {
                Msg m = read(in);
                kinds.add(m.type());
                if (m.type() == 'Z') break;
            }
            assertThat(kinds).containsExactly('T', 'D', 'C', 'Z');
        }
        long end = System.nanoTime() + 5_000_000_000L;
        while (cluster.site(0).proxy().limits().budget().used() != 0 && System.nanoTime() < end) Thread.sleep(20);
        assertThat(cluster.site(0).proxy().limits().budget().used()).as("bytes given back").isZero();
        assertServes();
    }

    @Test
    void copyDataPastTheBudgetGetsOutOfMemoryAndNothingIsCopied() throws Exception {
        try (Connection c = connect("postgres", null); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE IF NOT EXISTS big(v text)");
        }
        try (Socket s = session("postgres")) {
            DataOutputStream out = new DataOutputStream(new java.io.BufferedOutputStream(s.getOutputStream(), 1 << 16));
            DataInputStream in = new DataInputStream(s.getInputStream());
            writeMessage(out, 'Q', "COPY big FROM STDIN\0".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            assertThat(read(in).type()).isEqualTo('G');
            byte[] row = ("z".repeat(40 << 20) + "\n").getBytes(StandardCharsets.US_ASCII);
            for (int i = 0; i < 3; i++) writeMessage(out, 'd', row);   // 120 MB gathered before ordering: over the 100 MB budget
            writeMessage(out, 'c', new byte[0]);
            out.flush();
            List<Msg> answers = new ArrayList<>();
            do answers.add(read(in)); while (answers.getLast().type() != 'Z');
            assertThat(answers).extracting(Msg::type).containsExactly('E', 'Z');
            assertThat(answers.get(0).fields()).contains("C53200");
            writeMessage(out, 'Q', "SELECT count(*) FROM big\0".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            answers.clear();
            do answers.add(read(in)); while (answers.getLast().type() != 'Z');
            assertThat(answers).extracting(Msg::type).containsExactly('T', 'D', 'C', 'Z');
            assertThat(answers.get(1).fields()).endsWith("0");
        }
        assertThat(cluster.site(0).proxy().limits().budget().used()).isZero();
    }

    @Test
    void unknownUserAndWrongPasswordGetTheSameError() {
        Map<String, String> answers = new LinkedHashMap<>();
        for (String[] up : new String[][] {{"alice", "wrong"}, {"bob", "wrong"}, {"mallory", "wrong"}, {"nobody", "s3cret"}}) {
            SQLException e = (SQLException) org.assertj.core.api.Assertions.catchThrowable(() -> connect(up[0], up[1]).close());
            assertThat((Object) e).as(up[0]).isNotNull();
            answers.put(up[0], e.getSQLState() + " " + e.getMessage().replace(up[0], "USER"));
        }
        assertThat(answers.values()).as(answers.toString()).containsOnly("28P01 FATAL: password authentication failed for user \"USER\"");
    }

    @Test
    void anIdleSessionIsEndedWith57P05() throws Exception {
        try (Socket s = session("postgres")) {
            long t0 = System.nanoTime();
            Msg m = read(new DataInputStream(s.getInputStream()));
            long waited = (System.nanoTime() - t0) / 1_000_000;
            assertThat(m.type()).isEqualTo('E');
            assertThat(m.fields()).contains("C57P05").contains("idle-session timeout");
            assertThat(waited).isBetween(IDLE_MS - 200L, IDLE_MS + 5000L);
            assertThatThrownBy(() -> read(new DataInputStream(s.getInputStream()))).isInstanceOf(EOFException.class);
        }
    }

    @Test
    void aConnectionThatNeverCompletesItsStartupIsClosed() throws Exception {
        try (Socket silent = open(); Socket partial = open()) {
            partial.getOutputStream().write(startupPacket("alice"));   // asked for a password it never gives
            long t0 = System.nanoTime();
            assertThat(silent.getInputStream().read()).isEqualTo(-1);
            DataInputStream in = new DataInputStream(partial.getInputStream());
            assertThat(read(in).type()).isEqualTo('R');
            assertThat(in.read()).isEqualTo(-1);
            assertThat((System.nanoTime() - t0) / 1_000_000).isBetween(AUTH_MS - 200L, AUTH_MS + 5000L);
        }
    }

    @Test
    void aUserPastItsConnectionLimitGets53300() throws Exception {
        List<Connection> cs = new ArrayList<>();
        try {
            for (int i = 0; i < 12; i++) cs.add(connect("carol", null));
            assertThatThrownBy(() -> connect("carol", null).close()).isInstanceOf(SQLException.class)
                    .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("53300"))
                    .hasMessageContaining("too many connections for role \"carol\"");
            assertServes();   // other users are not limited by carol's sessions
            cs.remove(0).close();
            // the slot frees once the proxy has seen the session end (asynchronous, as a PostgreSQL backend's exit is)
            long end = System.nanoTime() + 5_000_000_000L;
            while (true) {
                try {
                    cs.add(connect("carol", null));
                    break;
                } catch (SQLException e) {
                    if (!"53300".equals(e.getSQLState()) || System.nanoTime() > end) throw e;
                    Thread.sleep(20);
                }
            }
        } finally {
            for (Connection c : cs) c.close();
        }
    }

    // ------------------------------------------------------------------ protocol fuzz

    /**
     * Random, mutated and truncated messages and huge declared lengths, before and after authentication,
     * each connection dropped when the server ends it: afterwards the site serves a normal session, no
     * session thread is left, the accept thread runs, the budget is whole and the heap is where it was.
     * Seeded: {@code -Dwanrep.fuzz.seed=S}; {@code -Dwanrep.fuzz.cases=N} (2000 by default, at most ~20 s).
     */
    @Test
    void protocolFuzz() throws Exception {
        long seed = Long.getLong("wanrep.fuzz.seed", System.nanoTime());
        int cases = Integer.getInteger("wanrep.fuzz.cases", 2000);
        System.out.println("ResourceBoundsTest.protocolFuzz seed " + seed + " (-Dwanrep.fuzz.seed=" + seed + ")");
        java.util.Random rnd = new java.util.Random(seed);
        try (Connection c = connect("postgres", null); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE IF NOT EXISTS fuzz(id int PRIMARY KEY, v text)");
        }
        java.lang.management.MemoryMXBean mem = java.lang.management.ManagementFactory.getMemoryMXBean();
        System.gc();
        long heapBefore = mem.getHeapMemoryUsage().getUsed();
        long end = System.nanoTime() + 20_000_000_000L;
        int done = 0, connections = 0, preAuth = 0;
        while (done < cases && System.nanoTime() < end) {
            connections++;
            boolean before = rnd.nextInt(3) == 0;
            try (Socket s = before ? open() : session("postgres")) {
                s.setSoTimeout(2000);
                DataOutputStream out = new DataOutputStream(new java.io.BufferedOutputStream(s.getOutputStream(), 1 << 14));
                if (before) {
                    preAuth++;
                    done++;
                    fuzzStartup(rnd, out);
                } else {
                    int k = 1 + rnd.nextInt(20);
                    for (int i = 0; i < k; i++) fuzzMessage(rnd, out);
                    done += k;
                    if (rnd.nextBoolean()) writeMessage(out, 'S', new byte[0]);
                }
                out.flush();
                drain(s, 30);
            } catch (IOException expected) {
                // the server ended the connection: what it must do with most of these
            }
        }
        System.out.println("protocolFuzz: " + done + " cases over " + connections + " connections (" + preAuth + " before authentication)");
        assertThat(done).as("cases run within the time limit").isGreaterThanOrEqualTo(Math.min(cases, 500));

        var site = cluster.site(0);
        long until = System.nanoTime() + 15_000_000_000L;
        while (System.nanoTime() < until && (sessionThreads() > 0 || site.proxy().limits().budget().used() != 0)) Thread.sleep(50);
        Thread.getAllStackTraces().forEach((t, st) -> {
            if (t.getName().equals("wanrep-client")) System.out.println("left: " + t + "\n  " + java.util.Arrays.stream(st).map(Object::toString)
                    .collect(java.util.stream.Collectors.joining("\n  ")));
        });
        if (sessionThreads() > 0) {
            try (Connection c = cluster.pgs.get(0).connect(); Statement st = c.createStatement();
                 ResultSet rs = st.executeQuery("SELECT pid, state, wait_event_type, wait_event, pg_blocking_pids(pid), left(query, 200) FROM pg_stat_activity WHERE backend_type = 'client backend'")) {
                while (rs.next()) System.out.println("backend " + rs.getInt(1) + " " + rs.getString(2) + " " + rs.getString(3) + "/" + rs.getString(4)
                        + " blocked by " + rs.getString(5) + ": " + rs.getString(6));
            }
        }
        assertThat(sessionThreads()).as("session threads left once every client has gone").isZero();
        assertServes();
        assertThat(site.engine().failure()).isNull();
        assertThat(site.proxy().accepting()).as("the accept thread runs").isTrue();
        assertThat(site.proxy().limits().budget().used()).as("budget given back").isZero();
        System.gc();
        long heapAfter = mem.getHeapMemoryUsage().getUsed();
        assertThat(heapAfter - heapBefore).as("heap growth after GC").isLessThan(64L << 20);
    }

    private static long sessionThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().equals("wanrep-client") && t.isAlive()).count();
    }

    /** Reads whatever the server sends for up to {@code ms} (or until it closes). */
    private static void drain(Socket s, int ms) throws IOException {
        s.setSoTimeout(ms);
        byte[] buf = new byte[8192];
        try {
            while (s.getInputStream().read(buf) >= 0) { }
        } catch (java.net.SocketTimeoutException e) {
            // nothing more for now
        }
    }

    private static final int[] HUGE = {Integer.MAX_VALUE, -1, Integer.MIN_VALUE, 0, 3, 1 << 30, 200 << 20, (64 << 20) + 5, 10_001, 65 << 20};

    private static int hugeLength(java.util.Random rnd) {
        return rnd.nextBoolean() ? HUGE[rnd.nextInt(HUGE.length)] : rnd.nextInt();
    }

    private static void fuzzStartup(java.util.Random rnd, DataOutputStream out) throws IOException {
        switch (rnd.nextInt(6)) {
            case 0 -> out.writeInt(hugeLength(rnd));   // a startup packet of any length, nothing after it
            case 1 -> {   // a startup packet with random content
                byte[] b = new byte[rnd.nextInt(300)];
                rnd.nextBytes(b);
                out.writeInt(b.length + 4);
                out.write(b);
            }
            case 2 -> out.write(mutate(rnd, startupPacket(rnd.nextBoolean() ? "alice" : "mallory")));
            case 3 -> {   // SCRAM: a password message with a huge length, or garbage
                out.write(startupPacket(rnd.nextBoolean() ? "alice" : "nobody"));
                out.writeByte(rnd.nextBoolean() ? 'p' : rnd.nextInt(256));
                if (rnd.nextBoolean()) out.writeInt(hugeLength(rnd));
                else {
                    byte[] b = new byte[rnd.nextInt(200)];
                    rnd.nextBytes(b);
                    out.writeInt(b.length + 4);
                    out.write(b);
                }
            }
            case 4 -> {   // SSLRequest or CancelRequest, then anything
                out.writeInt(rnd.nextBoolean() ? 8 : 16);
                out.writeInt(rnd.nextBoolean() ? 80877103 : 80877102);
                byte[] b = new byte[rnd.nextInt(40)];
                rnd.nextBytes(b);
                out.write(b);
            }
            default -> {   // md5 user, a truncated answer
                out.write(startupPacket("bob"));
                out.writeByte('p');
                out.writeInt(40);
                out.write(new byte[rnd.nextInt(36)]);
            }
        }
    }

    private static final String[] SQL = {"SELECT 1", "SELECT v FROM fuzz WHERE id = 1", "INSERT INTO fuzz VALUES (1, 'a') ON CONFLICT DO NOTHING",
            "UPDATE fuzz SET v = 'b' WHERE id = 1", "BEGIN", "COMMIT", "ROLLBACK", "COPY fuzz FROM STDIN", "SELECT pg_sleep(0)", "SHOW wanrep.sites"};

    private static byte[] cstrings(String... ss) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (String x : ss) {
            b.writeBytes(x.getBytes(StandardCharsets.UTF_8));
            b.write(0);
        }
        return b.toByteArray();
    }

    /** A valid frontend message of some kind. */
    private static Msg validMessage(java.util.Random rnd) {
        String sql = SQL[rnd.nextInt(SQL.length)];
        return switch (rnd.nextInt(9)) {
            case 0, 1 -> new Msg('Q', cstrings(sql));
            case 2 -> {
                ByteArrayOutputStream b = new ByteArrayOutputStream();
                b.writeBytes(cstrings(rnd.nextBoolean() ? "" : "s" + rnd.nextInt(3), sql));
                b.writeBytes(new byte[] {0, 0});
                yield new Msg('P', b.toByteArray());
            }
            case 3 -> new Msg('B', concat(cstrings("", rnd.nextBoolean() ? "" : "s" + rnd.nextInt(3)), new byte[] {0, 0, 0, 0, 0, 0}));
            case 4 -> new Msg('E', concat(cstrings(""), new byte[] {0, 0, 0, 0}));
            case 5 -> new Msg('D', concat(new byte[] {(byte) (rnd.nextBoolean() ? 'S' : 'P')}, cstrings("")));
            case 6 -> new Msg('d', ("1\t" + rnd.nextInt(100) + "\n").getBytes(StandardCharsets.UTF_8));
            case 7 -> new Msg(rnd.nextBoolean() ? 'c' : 'H', new byte[0]);
            default -> new Msg('C', concat(new byte[] {(byte) 'S'}, cstrings("s" + rnd.nextInt(3))));
        };
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] r = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, r, a.length, b.length);
        return r;
    }

    private static byte[] mutate(java.util.Random rnd, byte[] b) {
        byte[] r = b.clone();
        if (r.length == 0) return r;
        for (int i = 1 + rnd.nextInt(3); i > 0; i--) r[rnd.nextInt(r.length)] = (byte) rnd.nextInt(256);
        return r;
    }

    private static void fuzzMessage(java.util.Random rnd, DataOutputStream out) throws IOException {
        Msg m = validMessage(rnd);
        switch (rnd.nextInt(8)) {
            case 0, 1, 2 -> writeMessage(out, m.type(), m.payload());   // valid
            case 3 -> writeMessage(out, m.type(), mutate(rnd, m.payload()));   // mutated payload
            case 4 -> {   // a random type and payload
                byte[] b = new byte[rnd.nextInt(rnd.nextInt(10) == 0 ? 100_000 : 200)];
                rnd.nextBytes(b);
                writeMessage(out, (char) rnd.nextInt(256), b);
            }
            case 5 -> {   // truncated: the declared length is longer than what follows
                out.writeByte(m.type());
                out.writeInt(m.payload().length + 4 + 1 + rnd.nextInt(100));
                out.write(m.payload());
            }
            case 6 -> {   // a huge or invalid declared length
                out.writeByte(m.type());
                out.writeInt(hugeLength(rnd));
                out.write(m.payload(), 0, rnd.nextInt(m.payload().length + 1));
            }
            default -> {   // the length word itself mutated
                out.writeByte(m.type());
                out.writeInt((m.payload().length + 4) ^ (1 << rnd.nextInt(31)));
                out.write(m.payload());
            }
        }
    }
}
