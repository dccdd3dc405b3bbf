package org.wanrep.exec;

import org.wanrep.backend.BackendTarget;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.NavigableSet;
import java.util.TreeSet;

/**
 * Which ordered transactions (by GSN) this replica has, kept in the replica itself: every replicated
 * transaction committed here inserts a row {@code (gsn, done_below)} into {@code wanrep.position} of its
 * database, in its own local transaction, so a crash can never separate the effects from the record.
 * {@code done_below} is the engine's low-water mark when it ran: every GSN up to it had finished here
 * (committed, failed alike everywhere, or no transaction at all). Non-conflicting transactions commit out
 * of GSN order, so after a crash the replica has exactly: every GSN up to the highest {@code done_below},
 * plus the rows above it. Rows below a recorded mark are deleted now and then in a recording transaction.
 */
public final class ReplicaPosition {
    private ReplicaPosition() {}

    /**
     * What a replica has: every GSN up to {@code doneUpTo}, and {@code above} (committed out of order); {@code certified}:
     * the certified blocks it committed as their origin (request ids, marked inside their prepared transaction, see
     * {@link org.wanrep.txn.PositionSql#markCertified}), whose GSN no position records.
     */
    public record Recovered(long doneUpTo, NavigableSet<Long> above, java.util.Set<String> certified) {
        public static final Recovered EMPTY = new Recovered(0, new TreeSet<>(), java.util.Set.of());
    }

    static final String TABLE = WriteSetSql.APPLIED_SCHEMA + ".position";

    /** See {@link org.wanrep.txn.PositionSql#record}. */
    public static String recordSql(long gsn, long doneBelow, boolean compact) { return org.wanrep.txn.PositionSql.record(gsn, doneBelow, compact); }

    static final String FUNCTION = org.wanrep.txn.PositionSql.FUNCTION;
    static final String CERTIFIED = WriteSetSql.APPLIED_SCHEMA + ".certified";
    static final String CERTIFIED_FUNCTION = org.wanrep.txn.PositionSql.CERTIFIED_FUNCTION;

    /**
     * Creates the table in every database that accepts connections (template1 too, so databases created
     * later have it from their template) and reads what the replica has, over all of them.
     */
    public static Recovered prepare(BackendTarget target) throws SQLException {
        long done = 0;
        NavigableSet<Long> rows = new TreeSet<>();
        java.util.Set<String> certified = new java.util.HashSet<>();
        for (String db : databases(target)) {
            try (Connection c = connect(target, db); Statement st = c.createStatement()) {
                create(st);
                try (ResultSet rs = st.executeQuery("SELECT coalesce(max(done_below), 0) FROM " + TABLE)) {
                    rs.next();
                    done = Math.max(done, rs.getLong(1));
                }
                try (ResultSet rs = st.executeQuery("SELECT gsn FROM " + TABLE)) {
                    while (rs.next()) rows.add(rs.getLong(1));
                }
                try (ResultSet rs = st.executeQuery("SELECT id FROM " + CERTIFIED)) {
                    while (rs.next()) certified.add(rs.getString(1));
                }
            }
        }
        return new Recovered(done, new TreeSet<>(rows.tailSet(done, false)), certified);
    }

    /** After a state transfer: the replica has exactly every GSN up to {@code gsn} (a row with GSN 0 says so). */
    public static void markDone(BackendTarget target, long gsn) throws SQLException {
        try (Connection c = connect(target, "postgres"); Statement st = c.createStatement()) {
            st.execute("DELETE FROM " + TABLE + " WHERE gsn = 0");
            st.execute("INSERT INTO " + TABLE + " (gsn, done_below) VALUES (0, " + gsn + ")");
        }
    }

    private static void create(Statement st) throws SQLException {
        st.execute("CREATE SCHEMA IF NOT EXISTS " + WriteSetSql.APPLIED_SCHEMA);
        st.execute("CREATE TABLE IF NOT EXISTS " + TABLE + " (gsn bigint PRIMARY KEY, done_below bigint NOT NULL)");
        // PL/pgSQL, not SQL: a SQL function's body is parsed and planned at every call (35 us of server CPU per
        // transaction, against 21 us here, where the session keeps the plans; a plain INSERT costs 15 us). SECURITY
        // DEFINER (clients' roles cannot write the table) without SET search_path, which costs ~15 us a call (a GUC
        // nest level, the search path looked up twice): every name and operator in the bodies is schema-qualified, so
        // the session's search_path (which the client sets) cannot reach them
        st.execute("CREATE OR REPLACE FUNCTION " + FUNCTION + "(g bigint, d bigint, compact boolean) RETURNS void LANGUAGE plpgsql"
                + " SECURITY DEFINER AS $$ BEGIN INSERT INTO " + TABLE + " (gsn, done_below) VALUES (g, d);"
                + " IF compact THEN DELETE FROM " + TABLE + " WHERE gsn OPERATOR(pg_catalog.<) d; END IF; END $$");
        st.execute("CREATE TABLE IF NOT EXISTS " + CERTIFIED + " (id text PRIMARY KEY, at timestamptz NOT NULL)");
        st.execute("CREATE OR REPLACE FUNCTION " + CERTIFIED_FUNCTION + "(i text, compact boolean) RETURNS void LANGUAGE plpgsql"
                + " SECURITY DEFINER AS $$ BEGIN INSERT INTO " + CERTIFIED + " (id, at) VALUES (i, pg_catalog.clock_timestamp());"
                + " IF compact THEN DELETE FROM " + CERTIFIED + " WHERE at OPERATOR(pg_catalog.<) (pg_catalog.clock_timestamp()"
                + " OPERATOR(pg_catalog.-) '1 day'::pg_catalog.interval); END IF; END $$");
        st.execute("REVOKE ALL ON FUNCTION " + CERTIFIED_FUNCTION + "(text, boolean) FROM PUBLIC");
        st.execute("GRANT EXECUTE ON FUNCTION " + CERTIFIED_FUNCTION + "(text, boolean) TO PUBLIC");
        st.execute("REVOKE ALL ON FUNCTION " + FUNCTION + "(bigint, bigint, boolean) FROM PUBLIC");
        st.execute("GRANT USAGE ON SCHEMA " + WriteSetSql.APPLIED_SCHEMA + " TO PUBLIC");
        st.execute("GRANT EXECUTE ON FUNCTION " + FUNCTION + "(bigint, bigint, boolean) TO PUBLIC");
    }

    /** Databases (replica and name) known to have the table and function since the last catalog change. */
    private static final java.util.Set<String> ENSURED = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /**
     * Before a transaction records its GSN in {@code database}: a database created after the site started
     * from a template other than template1 (template0, say) lacks the table, and the record would stop
     * every site. Checked once per database until {@link #catalogChanged}.
     */
    public static void ensure(BackendTarget target, String database) {
        String key = target.host() + ":" + target.port() + "/" + database;
        if (ENSURED.contains(key)) return;
        synchronized (ENSURED) {
            if (ENSURED.contains(key)) return;
            try (Connection c = connect(target, database); Statement st = c.createStatement()) {
                try (ResultSet rs = st.executeQuery("SELECT pg_catalog.to_regprocedure('" + FUNCTION + "(bigint,bigint,boolean)') IS NOT NULL"
                        + " AND pg_catalog.to_regclass('" + TABLE + "') IS NOT NULL"
                        + " AND pg_catalog.to_regprocedure('" + CERTIFIED_FUNCTION + "(text,boolean)') IS NOT NULL")) {
                    rs.next();
                    if (!rs.getBoolean(1)) create(st);
                }
            } catch (SQLException e) {
                throw new IllegalStateException("cannot prepare wanrep.position in database " + database + ": " + e.getMessage(), e);
            }
            ENSURED.add(key);
        }
    }

    /** DDL committed (a database dropped and created again, say): check again before the next record. */
    public static void catalogChanged() { ENSURED.clear(); }

    /** A new group history starts (every site started afresh): GSNs count from 1 again, the old rows mean nothing. */
    public static void reset(BackendTarget target) throws SQLException {
        for (String db : databases(target))
            try (Connection c = connect(target, db); Statement st = c.createStatement()) {
                st.execute("DELETE FROM " + TABLE);
            }
    }

    private static List<String> databases(BackendTarget target) throws SQLException {
        List<String> dbs = new ArrayList<>();
        try (Connection c = connect(target, "postgres"); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT datname FROM pg_catalog.pg_database WHERE datallowconn ORDER BY datname")) {
            while (rs.next()) dbs.add(rs.getString(1));
        }
        return dbs;
    }

    static final String HISTORY = WriteSetSql.APPLIED_SCHEMA + ".history";

    /**
     * For write-set policies, which record no position: whether the replica took part in a group history, a row in
     * {@code wanrep.history} of database postgres (see {@link org.wanrep.txn.ReplicationEngine.HistoryMarker}).
     * Written in a transaction of its own, which carries no tag, so the write-set capture ignores it.
     */
    public static org.wanrep.txn.ReplicationEngine.HistoryMarker historyMarker(BackendTarget target) {
        return new org.wanrep.txn.ReplicationEngine.HistoryMarker() {
            @Override public boolean marked() throws SQLException {
                try (Connection c = connect(target, "postgres"); Statement st = c.createStatement()) {
                    createHistory(st);
                    try (ResultSet rs = st.executeQuery("SELECT EXISTS (SELECT 1 FROM " + HISTORY + ")")) {
                        rs.next();
                        return rs.getBoolean(1);
                    }
                }
            }

            @Override public void mark() throws SQLException {
                try (Connection c = connect(target, "postgres"); Statement st = c.createStatement()) {
                    createHistory(st);
                    st.execute("INSERT INTO " + HISTORY + " (since) VALUES (now())");
                }
            }

            @Override public void clear() throws SQLException {
                try (Connection c = connect(target, "postgres"); Statement st = c.createStatement()) {
                    createHistory(st);
                    st.execute("DELETE FROM " + HISTORY);
                }
            }
        };
    }

    private static void createHistory(Statement st) throws SQLException {
        st.execute("CREATE SCHEMA IF NOT EXISTS " + WriteSetSql.APPLIED_SCHEMA);
        st.execute("CREATE TABLE IF NOT EXISTS " + HISTORY + " (since timestamptz NOT NULL)");
    }

    private static Connection connect(BackendTarget target, String database) throws SQLException {
        return target.jdbc(database, "wanrep-position");
    }
}
