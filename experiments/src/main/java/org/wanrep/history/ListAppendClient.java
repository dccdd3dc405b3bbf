package org.wanrep.history;

import org.wanrep.checker.Event;
import org.wanrep.checker.History;
import org.wanrep.checker.MicroOp;
import org.wanrep.checker.OpType;

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
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One client of the list-append workload, connected with pgjdbc to its site's proxy. Each transaction is sent either
 * as one request (its statements in one simple Query, autocommit) or as an interactive block (autocommit off, one
 * statement per round trip, then COMMIT), at random. It records the invocation before sending and the completion
 * after the answer: ok; fail when the server refused it with a definite error before it could commit; info (unknown)
 * when the connection broke, timed out, or COMMIT itself failed. After an unknown outcome the client continues as a
 * new process (Jepsen's rule: a process has at most one transaction in doubt, and its session order ends there).
 */
final class ListAppendClient implements Runnable {
    /**
     * Key k lives in table la{k % TABLES} (int key, the list as comma-separated text): several tables, so transactions
     * take different lock sets and a block's statements span tables, as real transactions do.
     */
    static final int TABLES = 3;

    static String table(long key) { return "la" + (key % TABLES); }

    static List<String> tableDdl() {
        List<String> l = new ArrayList<>();
        for (int i = 0; i < TABLES; i++) l.add("CREATE TABLE la" + i + " (k int PRIMARY KEY, v text NOT NULL)");
        return l;
    }

    /** One statement reading the given keys from their tables (one snapshot). */
    static String selectKeys(java.util.Collection<Long> keys) {
        Map<String, StringBuilder> in = new java.util.TreeMap<>();
        for (long k : keys) {
            StringBuilder b = in.computeIfAbsent(table(k), t -> new StringBuilder());
            b.append(b.isEmpty() ? "" : ",").append(k);
        }
        StringBuilder sql = new StringBuilder();
        for (Map.Entry<String, StringBuilder> e : in.entrySet())
            sql.append(sql.isEmpty() ? "" : " UNION ALL ").append("SELECT k, v FROM ").append(e.getKey()).append(" WHERE k IN (").append(e.getValue()).append(')');
        return sql.toString();
    }

    private final String site;
    private final String url;
    private final KeySpace keys;
    private final History history;
    private final Random rnd;
    private final long t0;
    private final long deadline;
    private final AtomicLong txnIds;
    private final AtomicInteger processes;
    private final int socketTimeoutSeconds;
    private int process;
    private Connection conn;

    ListAppendClient(String site, String host, int port, KeySpace keys, History history, long seed, long t0, long deadline,
                     AtomicLong txnIds, AtomicInteger processes, int socketTimeoutSeconds) {
        this.site = site;
        this.url = "jdbc:postgresql://" + host + ":" + port + "/postgres";
        this.keys = keys;
        this.history = history;
        this.rnd = new Random(seed);
        this.t0 = t0;
        this.deadline = deadline;
        this.txnIds = txnIds;
        this.processes = processes;
        this.socketTimeoutSeconds = socketTimeoutSeconds;
        this.process = processes.getAndIncrement();
    }

    static Connection connect(String url, int socketTimeoutSeconds) throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", "postgres");
        p.setProperty("preferQueryMode", "simple");   // several statements in one Query message: one request
        p.setProperty("connectTimeout", "5");
        p.setProperty("socketTimeout", Integer.toString(socketTimeoutSeconds));
        p.setProperty("tcpKeepAlive", "true");
        p.setProperty("ApplicationName", "wanrep-history-check");
        return DriverManager.getConnection(url, p);
    }

    @Override public void run() {
        while (System.nanoTime() < deadline && !Thread.currentThread().isInterrupted()) {
            if (conn == null) {
                try {
                    conn = connect(url, socketTimeoutSeconds);
                } catch (SQLException e) {
                    sleep(500);   // the site may be down for good (no rejoin yet): keep trying until the end
                    continue;
                }
            }
            List<MicroOp> ops = keys.next(rnd);
            boolean interactive = rnd.nextBoolean();
            long id = txnIds.incrementAndGet();
            history.add(new Event(process, id, OpType.INVOKE, now(), ops, site, null));
            try {
                List<MicroOp> done = interactive ? interactive(ops) : oneRequest(ops);
                history.add(new Event(process, id, OpType.OK, now(), done, site, null));
            } catch (Outcome o) {
                history.add(new Event(process, id, o.type, now(), ops, site, (interactive ? "block: " : "request: ") + o.getMessage()));
                if (o.type == OpType.INFO) {
                    close();
                    process = processes.getAndIncrement();
                }
            }
        }
        close();
    }

    private long now() { return System.nanoTime() - t0; }

    /** The transaction's statements in one simple Query (autocommit): one replicated request. */
    private List<MicroOp> oneRequest(List<MicroOp> ops) throws Outcome {
        try (Statement st = conn.createStatement()) {
            if (ops.stream().allMatch(MicroOp::isRead)) {
                // read-only: one SELECT, so one snapshot, whatever the isolation level of a plain query
                Map<Long, long[]> lists = new LinkedHashMap<>();
                for (MicroOp o : ops) lists.putIfAbsent(o.key(), new long[0]);
                try (ResultSet rs = st.executeQuery(selectKeys(lists.keySet()))) {
                    while (rs.next()) lists.put((long) rs.getInt(1), parse(rs.getString(2)));
                }
                List<MicroOp> done = new ArrayList<>();
                for (MicroOp o : ops) done.add(o.withRead(lists.get(o.key())));
                return done;
            }
            StringBuilder sql = new StringBuilder();
            for (MicroOp o : ops) sql.append(sql.isEmpty() ? "" : "; ").append(statement(o));
            boolean isResultSet = st.execute(sql.toString());
            List<MicroOp> done = new ArrayList<>();
            for (MicroOp o : ops) {
                if (o.isRead()) {
                    if (!isResultSet) throw new Outcome(OpType.INFO, "the proxy returned no result set for " + statement(o) + " in a multi-statement request");
                    try (ResultSet rs = st.getResultSet()) {
                        done.add(o.withRead(rs.next() ? parse(rs.getString(1)) : new long[0]));
                    }
                } else {
                    if (isResultSet || st.getUpdateCount() != 1)
                        throw new Outcome(OpType.INFO, "the proxy returned " + (isResultSet ? "a result set" : "update count " + st.getUpdateCount()) + " for " + statement(o));
                    done.add(o);
                }
                isResultSet = st.getMoreResults();
            }
            if (isResultSet || st.getUpdateCount() != -1) throw new Outcome(OpType.INFO, "the proxy returned more results than statements");
            return done;
        } catch (SQLException e) {
            throw new Outcome(definite(e) ? OpType.FAIL : OpType.INFO, describe(e));
        }
    }

    /** BEGIN, one statement per round trip, COMMIT. Errors before COMMIT are definite; at COMMIT only class 40 (rolled back) is. */
    private List<MicroOp> interactive(List<MicroOp> ops) throws Outcome {
        List<MicroOp> done = new ArrayList<>();
        try {
            conn.setAutoCommit(false);
            try (Statement st = conn.createStatement()) {
                for (MicroOp o : ops) {
                    if (o.isRead()) {
                        try (ResultSet rs = st.executeQuery(statement(o))) {
                            done.add(o.withRead(rs.next() ? parse(rs.getString(1)) : new long[0]));
                        }
                    } else {
                        // half the appends to a row that exists are an UPDATE by key (a certified block then records the
                        // position at which it locked the row), the rest and new rows the INSERT ... ON CONFLICT
                        int n = o.value() % 2 == 0 ? st.executeUpdate(updateStatement(o)) : 0;
                        if (n == 0) n = st.executeUpdate(statement(o));
                        if (n != 1) throw new Outcome(OpType.INFO, "update count " + n + " for " + statement(o));
                        done.add(o);
                    }
                }
            }
        } catch (SQLException e) {
            boolean definite = definite(e);
            try {
                conn.rollback();
                conn.setAutoCommit(true);
            } catch (SQLException r) {
                close();   // the session is gone; a block that never reached COMMIT cannot commit, so the outcome stands
            }
            throw new Outcome(definite ? OpType.FAIL : OpType.INFO, describe(e));
        }
        try {
            conn.commit();
        } catch (SQLException e) {
            // a serialization failure or deadlock at COMMIT is PostgreSQL's "rolled back" (a certified block that
            // lost its certification answers so): definite, so the checker sees it if it committed after all;
            // anything else there (the connection lost, the site stopping) leaves the outcome unknown
            String state = e.getSQLState();
            boolean rolledBack = state != null && state.startsWith("40");
            // back to autocommit: pgjdbc keeps autocommit off after a failed commit(), and the next one-request
            // transaction would then run, unacknowledged by any COMMIT, inside a block of its own
            try {
                conn.setAutoCommit(true);
            } catch (SQLException r) {
                close();
            }
            throw new Outcome(rolledBack ? OpType.FAIL : OpType.INFO, "at COMMIT: " + describe(e));
        }
        try {
            conn.setAutoCommit(true);
        } catch (SQLException e) {
            close();   // committed; the next transaction reconnects
        }
        return done;
    }

    static String statement(MicroOp o) {
        return o.isAppend()
                ? "INSERT INTO " + table(o.key()) + " AS t (k, v) VALUES (" + o.key() + ", '" + o.value() + "') ON CONFLICT (k) DO UPDATE SET v = t.v || ',' || excluded.v"
                : "SELECT v FROM " + table(o.key()) + " WHERE k = " + o.key();
    }

    /** An append to a row that exists, by key (0 rows when it does not). */
    static String updateStatement(MicroOp o) {
        return "UPDATE " + table(o.key()) + " SET v = v || '," + o.value() + "' WHERE k = " + o.key();
    }

    static long[] parse(String v) {
        if (v == null || v.isEmpty()) return new long[0];
        String[] parts = v.split(",");
        long[] l = new long[parts.length];
        for (int i = 0; i < parts.length; i++) l[i] = Long.parseLong(parts[i]);
        return l;
    }

    /**
     * Errors that mean the transaction did not commit: serialization failures and deadlocks, constraint and
     * syntax/semantic errors, refusals. Anything else (connection, admin shutdown, resources, internal) is unknown.
     */
    static boolean definite(SQLException e) {
        String s = e.getSQLState();
        if (s == null || s.length() != 5) return false;
        String cls = s.substring(0, 2);
        return cls.equals("40") || cls.equals("23") || cls.equals("42") || cls.equals("22") || cls.equals("0A") || cls.equals("25");
    }

    static String describe(SQLException e) {
        String m = e.getMessage() == null ? e.toString() : e.getMessage().lines().findFirst().orElse("");
        return (e.getSQLState() == null ? "" : e.getSQLState() + " ") + m;
    }

    private void close() {
        if (conn != null) {
            try {
                conn.close();
            } catch (SQLException ignored) {
                // a dead connection: nothing to release
            }
            conn = null;
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** How a transaction ended other than ok. */
    static final class Outcome extends Exception {
        final OpType type;

        Outcome(OpType type, String message) {
            super(message, null, false, false);
            this.type = type;
        }
    }
}
