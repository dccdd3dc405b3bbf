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
    static TestCluster cluster;

    @BeforeAll
    static void start() throws Exception {
        cluster = new TestCluster(List.of("solo"), "none", Map.of("delivery", "safe",
                "users", "postgres:trust,carol:trust,dave:trust,alice:scram-sha-256:s3cret,bob:md5:hunter2",
                "proxy.max_message_mb", "64", "proxy.buffer_budget_mb", "100",
                "proxy.idle_session_timeout_ms", Integer.toString(IDLE_MS), "proxy.max_clients_per_user", "12"));
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
    void aUserPastItsConnectionLimitGets53300() throws Exception {
        List<Connection> cs = new ArrayList<>();
        try {
            for (int i = 0; i < 12; i++) cs.add(connect("carol", null));
            assertThatThrownBy(() -> connect("carol", null).close()).isInstanceOf(SQLException.class)
                    .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("53300"))
                    .hasMessageContaining("too many connections for role \"carol\"");
            assertServes();   // other users are not limited by carol's sessions
            cs.remove(0).close();
            cs.add(connect("carol", null));
        } finally {
            for (Connection c : cs) c.close();
        }
    }
}
