package org.wanrep.exec;

import org.wanrep.lock.TableSet;

import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The SQL the executing site adds to a write-set transaction: the capture tag, and a check before
 * COMMIT that refuses what a write set cannot carry, so that no site ever commits a change the
 * others would silently miss:
 * <ul>
 *   <li>a written table without primary key or replica identity (wal2json drops its updates and deletes),</li>
 *   <li>a written unlogged table (never decoded),</li>
 *   <li>a change of the catalog hidden in a function or DO block (DDL is not decoded; as a statement it runs everywhere).</li>
 * </ul>
 * Sequences are not decoded either: their values are read here and shipped with the write set.
 */
public final class WriteSetSql {
    private WriteSetSql() {}

    /** The logical-decoding message prefix that marks our tags (WriteSetCapture's default). */
    public static final String TAG_PREFIX = "wanrep";

    public static String tag(String tag) {
        return "SELECT pg_catalog.pg_logical_emit_message(true, '" + TAG_PREFIX + "', " + literal(tag) + ")";
    }

    private static final String CHECK = """
            DO $wanrep$
            DECLARE keyless text; unlogged text; ddl text;
              -- this transaction's own row counts: inserts into a keyless table apply without a key, its updates and
              -- deletes are dropped by the decoder; without the counts (track_counts off) every write is refused
              counted boolean := pg_catalog.current_setting('track_counts')::boolean;
            BEGIN
              SELECT string_agg(DISTINCT c.oid::regclass::text, ', ') FILTER (WHERE c.relpersistence <> 'u' AND (NOT counted OR EXISTS
                       (SELECT 1 FROM pg_catalog.pg_stat_xact_all_tables x WHERE x.relid = c.oid AND x.n_tup_upd + x.n_tup_del > 0))),
                     string_agg(DISTINCT c.oid::regclass::text, ', ') FILTER (WHERE c.relpersistence = 'u')
                INTO keyless, unlogged
                FROM pg_catalog.pg_locks l JOIN pg_catalog.pg_class c ON c.oid = l.relation
               WHERE l.pid = pg_catalog.pg_backend_pid() AND l.locktype = 'relation' AND l.mode = 'RowExclusiveLock'
                 AND c.relkind = 'r' AND c.relpersistence <> 't' AND c.relnamespace <> 'pg_catalog'::regnamespace
                 AND (c.relpersistence = 'u' OR c.relreplident = 'n' OR (c.relreplident = 'd' AND NOT EXISTS
                      (SELECT 1 FROM pg_catalog.pg_index i WHERE i.indrelid = c.oid AND i.indisprimary)));
              IF unlogged IS NOT NULL THEN
                RAISE EXCEPTION USING ERRCODE = '0A000',
                  MESSAGE = 'wanrep: write-set replication cannot carry changes of unlogged tables (' || unlogged || ')',
                  HINT = 'Make the table logged (ALTER TABLE ... SET LOGGED), or use execution: symmetric.';
              END IF;
              IF keyless IS NOT NULL THEN
                RAISE EXCEPTION USING ERRCODE = '55000',
                  MESSAGE = 'wanrep: write-set replication needs a primary key or replica identity to update or delete rows of ' || keyless,
                  HINT = 'Add a primary key, or ALTER TABLE ... REPLICA IDENTITY FULL, or use execution: symmetric.';
              END IF;
              SELECT string_agg(DISTINCT c.relname, ', ') INTO ddl
                FROM pg_catalog.pg_locks l JOIN pg_catalog.pg_class c ON c.oid = l.relation
               WHERE l.pid = pg_catalog.pg_backend_pid() AND l.locktype = 'relation'
                 AND l.mode IN ('RowExclusiveLock', 'ShareRowExclusiveLock', 'AccessExclusiveLock')
                 AND c.relnamespace = 'pg_catalog'::regnamespace;
              IF ddl IS NOT NULL THEN
                RAISE EXCEPTION USING ERRCODE = '0A000',
                  MESSAGE = 'wanrep: this transaction changes the catalog (' || ddl || ') inside a function or DO block; write sets do not carry schema changes',
                  HINT = 'Run DDL as a statement of its own (wanrep runs it at every site).';
              END IF;
            END $wanrep$""";

    /** The check, then (if the transaction may have advanced sequences) a query of their values. */
    public static String checkAndSequences(TableSet tables) {
        String seq = sequences(tables);
        return seq == null ? CHECK : CHECK + "; " + seq;
    }

    /**
     * The put-back of the sequences a transaction may advance, as they are now: one SELECT of setval()
     * calls, or null if it writes nothing. Sequences are not transactional; an attempt that is rolled
     * back to run again (a transient refusal, or revoked under opt-safe) must leave them as it found them,
     * or its nextval would have advanced them at this site only. Only sequences the session can read
     * (proxy.session_role client: a role without USAGE or SELECT sees no value, and must not reset them).
     */
    public static String sequenceStates(TableSet tables) {
        return ofWrittenSequences("SELECT pg_catalog.string_agg(pg_catalog.format('pg_catalog.setval(%L, %s, %s)', s.schemaname || '.' || s.sequencename, "
                + "coalesce(s.last_value, s.start_value), CASE WHEN s.last_value IS NULL THEN 'false' ELSE 'true' END), ', ') "
                + "FROM pg_catalog.pg_sequences s WHERE pg_catalog.has_sequence_privilege(pg_catalog.format('%I.%I', s.schemaname, s.sequencename), 'SELECT, USAGE')", tables);
    }

    /** Last values of the sequences the transaction may have advanced, or null if it writes nothing. */
    static String sequences(TableSet tables) {
        return ofWrittenSequences("SELECT s.schemaname || '.' || s.sequencename, s.last_value FROM pg_catalog.pg_sequences s "
                + "WHERE s.last_value IS NOT NULL", tables);
    }

    /** {@code query} (over pg_sequences s, ending in a WHERE clause) limited to the written relations; null if nothing is written. */
    private static String ofWrittenSequences(String query, TableSet tables) {
        if (tables.all()) return query;
        if (tables.writes().isEmpty()) return null;
        StringBuilder b = new StringBuilder(query).append(" AND s.schemaname || '.' || s.sequencename IN (");
        boolean first = true;
        for (String w : new TreeSet<>(tables.writes())) {
            if (!first) b.append(", ");
            b.append(literal(w));
            first = false;
        }
        return b.append(")").toString();
    }

    /** setval statements bringing this replica's sequences to the executor's values. */
    public static String setSequences(Map<String, Long> values) {
        StringBuilder b = new StringBuilder();
        for (var e : new TreeMap<>(values).entrySet()) {
            if (!b.isEmpty()) b.append("; ");
            b.append("SELECT pg_catalog.setval(").append(literal(qualified(e.getKey()))).append("::regclass, ").append(e.getValue()).append(", true)");
        }
        return b.toString();
    }

    /**
     * The write sets this replica applied, one row per transaction (keyed by the member that sent
     * the request, incarnation included, and its counter), written in the apply's own transaction:
     * a retried apply of one that committed finds its row and is skipped. Not replicated (the
     * appliers' replication origin keeps it out of the capture); {@code TableDigest} ignores it.
     */
    public static final String APPLIED_SCHEMA = "wanrep";

    /** How long a row is kept: far beyond any retry of an apply. */
    private static final String KEEP = "1 hour";

    static void createAppliedTable(java.sql.Connection c) throws java.sql.SQLException {
        boolean auto = c.getAutoCommit();
        c.setAutoCommit(true);
        try (java.sql.Statement st = c.createStatement()) {
            st.execute("CREATE SCHEMA IF NOT EXISTS " + APPLIED_SCHEMA);
            st.execute("CREATE TABLE IF NOT EXISTS " + APPLIED_SCHEMA + ".applied (origin text NOT NULL, seq bigint NOT NULL, "
                    + "applied_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (origin, seq))");
        } finally {
            c.setAutoCommit(auto);
        }
    }

    private static final java.util.concurrent.atomic.AtomicLong MARKS = new java.util.concurrent.atomic.AtomicLong();

    /**
     * In the apply's transaction: records that {@code origin}'s request {@code seq} is applied here.
     * False if it already was (a concurrent apply of the same one waits on the key, then sees it).
     */
    static boolean markApplied(java.sql.Connection c, String origin, long seq) throws java.sql.SQLException {
        if (MARKS.incrementAndGet() % 1000 == 0) {   // now and then, forget old ones
            try (java.sql.Statement st = c.createStatement()) {
                st.execute("DELETE FROM " + APPLIED_SCHEMA + ".applied WHERE applied_at < now() - interval '" + KEEP + "'");
            }
        }
        try (java.sql.PreparedStatement ps = c.prepareStatement(
                "INSERT INTO " + APPLIED_SCHEMA + ".applied (origin, seq) VALUES (?, ?) ON CONFLICT DO NOTHING")) {
            ps.setString(1, origin);
            ps.setLong(2, seq);
            return ps.executeUpdate() == 1;
        }
    }

    /** {@code schema.name} as a quoted, qualified identifier. */
    static String qualified(String name) {
        int dot = name.indexOf('.');
        return ident(name.substring(0, dot)) + "." + ident(name.substring(dot + 1));
    }

    private static String ident(String s) { return "\"" + s.replace("\"", "\"\"") + "\""; }

    static String literal(String s) { return "'" + s.replace("'", "''") + "'"; }
}
