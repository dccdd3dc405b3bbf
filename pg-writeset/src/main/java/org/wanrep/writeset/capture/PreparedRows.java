package org.wanrep.writeset.capture;

import org.wanrep.writeset.ColumnValue;
import org.wanrep.writeset.KeyCheck;
import org.wanrep.writeset.RowChange;
import org.wanrep.writeset.RowChange.Action;
import org.wanrep.writeset.WriteSetRefusedException;
import org.wanrep.writeset.capture.TestDecodingParser.Change;
import org.wanrep.writeset.capture.TestDecodingParser.Column;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Turns a prepared transaction's test_decoding changes into {@link RowChange}s, with column types and
 * replica-identity keys from the catalog.
 * <p>
 * Types are the catalog's, qualified, without a type modifier: {@code format_type(type, -1)} writes
 * {@code bpchar} for {@code char(84)} and {@code "bit"} for {@code bit(4)}, casts that keep a value whole
 * (test_decoding's {@code character} and {@code bit} would be {@code char(1)} and {@code bit(1)}, and the
 * applier's {@code $n::character} would cut values to one character); the column's own type then applies
 * its modifier on assignment, to a value that already satisfied it at the origin. Without modifiers a
 * description of a table stays right when only a modifier changes, so the capture may keep it while the
 * printed columns still match it ({@link #describes}): names, and types as test_decoding prints them.
 * <p>
 * While a transaction is prepared, the tables it wrote cannot be altered (it holds their locks), so
 * what {@link #lookup} reads now is what the rows were written against. A table created or altered by
 * the transaction itself is not visible yet: such a transaction is refused.
 */
public final class PreparedRows {
    private PreparedRows() {}

    /**
     * A table as the catalog describes it: columns in attnum order, name to type (qualified, without modifier: a cast
     * that keeps the value whole), name to the type as test_decoding prints it (to check a kept description against).
     */
    public record Table(char replident, Map<String, String> types, List<String> keyColumns, Map<String, String> printed) {
        public Table {
            types = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(types));
            keyColumns = List.copyOf(keyColumns);
            printed = Map.copyOf(printed);
        }

        public Table(char replident, Map<String, String> types, List<String> keyColumns) {
            this(replident, types, keyColumns, Map.of());
        }
    }

    /** Schema and table, unquoted. */
    public record Name(String schema, String table) {
        @Override public String toString() { return KeyCheck.quoted(schema, table); }
    }

    // search_path = pg_catalog on this connection: format_type then qualifies every other type, so the
    // applier's casts do not depend on its search_path
    private static final String SQL = """
            SELECT q.nsp, q.rel, c.relreplident, a.attname, pg_catalog.format_type(a.atttypid, -1),
                   COALESCE(a.attnum = ANY (ix.indkey::int2[]), false), pg_catalog.format_type(a.atttypid, NULL)
            FROM unnest(?::text[], ?::text[]) AS q(nsp, rel)
            JOIN pg_catalog.pg_namespace n ON n.nspname = q.nsp
            JOIN pg_catalog.pg_class c ON c.relnamespace = n.oid AND c.relname = q.rel
            JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
            LEFT JOIN LATERAL (SELECT i.indkey FROM pg_catalog.pg_index i WHERE i.indrelid = c.oid
                  AND CASE c.relreplident WHEN 'd' THEN i.indisprimary WHEN 'i' THEN i.indisreplident ELSE false END
                  LIMIT 1) ix ON true
            ORDER BY q.nsp, q.rel, a.attnum""";

    /** The tables {@code changes} touch, in one query. Tables not found are absent from the result. */
    public static Map<Name, Table> lookup(Connection c, List<Change> changes) throws SQLException {
        Set<Name> names = new LinkedHashSet<>();
        for (Change ch : changes) names.add(new Name(ch.schema(), ch.table()));
        Map<Name, Table> out = new HashMap<>();
        if (names.isEmpty()) return out;
        List<String> nsp = new ArrayList<>(), rel = new ArrayList<>();
        for (Name n : names) {
            nsp.add(n.schema());
            rel.add(n.table());
        }
        Map<Name, char[]> ident = new HashMap<>();
        Map<Name, Map<String, String>> types = new LinkedHashMap<>();
        Map<Name, List<String>> keys = new HashMap<>();
        Map<Name, Map<String, String>> printed = new HashMap<>();
        try (PreparedStatement ps = c.prepareStatement(SQL)) {
            ps.setArray(1, c.createArrayOf("text", nsp.toArray()));
            ps.setArray(2, c.createArrayOf("text", rel.toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    Name n = new Name(rs.getString(1), rs.getString(2));
                    ident.putIfAbsent(n, new char[]{rs.getString(3).charAt(0)});
                    types.computeIfAbsent(n, k -> new LinkedHashMap<>()).put(rs.getString(4), rs.getString(5));
                    List<String> k = keys.computeIfAbsent(n, x -> new ArrayList<>());
                    if (rs.getBoolean(6)) k.add(rs.getString(4));
                    printed.computeIfAbsent(n, x -> new HashMap<>()).put(rs.getString(4), rs.getString(7));
                }
            }
        }
        types.forEach((n, t) -> out.put(n, new Table(ident.get(n)[0], t, keys.get(n), printed.get(n))));
        return out;
    }

    /**
     * The rows, as {@code WriteSetCapture} would build them from wal2json: names unquoted; {@code key} the
     * replica identity as it was before (empty for INSERT, every column under REPLICA IDENTITY FULL);
     * {@code values} the new row in column order, without TOAST-unchanged columns. Throws when the
     * transaction cannot be shipped faithfully: no identity (55000), or the catalog does not match (0A000).
     */
    public static List<RowChange> rows(List<Change> changes, Map<Name, Table> tables) throws WriteSetRefusedException {
        List<RowChange> out = new ArrayList<>(changes.size());
        List<String> noIdentity = new ArrayList<>();
        for (Change ch : changes) {
            Name n = new Name(ch.schema(), ch.table());
            Table t = tables.get(n);
            if (t == null)
                throw new WriteSetRefusedException("table " + n + " is not in the catalog (created, renamed or dropped by the prepared"
                        + " transaction itself, or since): its rows cannot be typed", WriteSetRefusedException.NOT_SUPPORTED);
            if (ch.action() == Action.INSERT) {
                if (ch.newTuple() == null) throw refuse("INSERT into " + n + " without row data");
                out.add(new RowChange(n.schema(), n.table(), Action.INSERT, List.of(), values(ch.newTuple(), n, t, false)));
                continue;
            }
            List<ColumnValue> key = key(ch, n, t);
            if (key == null) {
                if (!noIdentity.contains(n.toString())) noIdentity.add(n.toString());
                continue;
            }
            List<ColumnValue> vals = ch.action() == Action.UPDATE ? values(ch.newTuple(), n, t, true) : List.of();
            out.add(new RowChange(n.schema(), n.table(), ch.action(), key, vals));
        }
        if (!noIdentity.isEmpty()) throw KeyCheck.noIdentity(noIdentity);
        return out;
    }

    /**
     * Whether a description {@code t} of the table still fits change {@code ch}: every printed column is one of the
     * table's with the type test_decoding prints, and a new row has every column. A column added, dropped, renamed or
     * given another type shows here; a changed modifier does not, and needs not (the types carry none).
     */
    public static boolean describes(Table t, Change ch) {
        if (t.printed().isEmpty()) return false;
        if (ch.newTuple() != null && (ch.newTuple().size() != t.types().size() || !columnsFit(t, ch.newTuple()))) return false;
        if (ch.action() == Action.INSERT) return true;
        // the identity as printed must be the one described: a key's columns exactly, a full identity's every column
        // (one with NULLs, which it leaves out, is looked up again); a change the description would refuse, too
        if (ch.oldKey() == null) return ch.action() == Action.UPDATE && (t.replident() == 'd' || t.replident() == 'i') && !t.keyColumns().isEmpty();
        if (!columnsFit(t, ch.oldKey())) return false;
        java.util.Set<String> printed = new java.util.HashSet<>();
        for (Column c : ch.oldKey()) printed.add(c.name());
        return switch (t.replident()) {
            case 'd', 'i' -> !t.keyColumns().isEmpty() && printed.equals(new java.util.HashSet<>(t.keyColumns()));
            case 'f' -> printed.size() == t.types().size();
            default -> false;
        };
    }

    private static boolean columnsFit(Table t, List<Column> columns) {
        for (Column c : columns) {
            String p = t.printed().get(c.name());
            // the catalog connection qualifies every type outside pg_catalog; test_decoding only those not on its path
            if (p == null || !(p.equals(c.type()) || p.endsWith("." + c.type()))) return false;
        }
        return true;
    }

    /** The identity before the change, or null if the table has none (or it was not logged). */
    private static List<ColumnValue> key(Change ch, Name n, Table t) throws WriteSetRefusedException {
        boolean full = t.replident() == 'f';
        boolean keyed = (t.replident() == 'd' || t.replident() == 'i') && !t.keyColumns().isEmpty();
        if (!full && !keyed) return null;
        if (ch.action() == Action.UPDATE && ch.newTuple() == null) throw refuse("UPDATE of " + n + " without new row data");
        List<Column> printed = ch.oldKey();
        if (printed == null) {
            // DELETE (no-tuple-data), or FULL without old tuple: nothing identifies the row
            if (ch.action() == Action.DELETE || full) return null;
            printed = ch.newTuple();   // UPDATE that left the key alone: the key is in the new row
        }
        Map<String, Column> byName = new HashMap<>();
        for (Column c : printed) byName.put(c.name(), c);
        for (String name : byName.keySet())
            if (!t.types().containsKey(name)) throw refuse("column " + name + " of " + n + " is not in the catalog (altered since?)");
        List<ColumnValue> key = new ArrayList<>();
        for (String name : full ? t.types().keySet() : t.keyColumns()) {
            Column c = byName.get(name);
            if (c == null) {
                // old-key and DELETE tuples leave NULLs out (only FULL identities can hold NULLs)
                if (printed == ch.newTuple() || !full) throw refuse("identity column " + name + " of " + n + " missing from the logged row");
                key.add(new ColumnValue(name, t.types().get(name), null));
                continue;
            }
            if (c.toastUnchanged()) throw refuse("identity column " + name + " of " + n + " is an unchanged TOASTed value the change does not carry");
            key.add(new ColumnValue(name, t.types().get(name), c.value()));
        }
        return key;
    }

    private static List<ColumnValue> values(List<Column> tuple, Name n, Table t, boolean update) throws WriteSetRefusedException {
        List<ColumnValue> out = new ArrayList<>(tuple.size());
        for (Column c : tuple) {
            String type = t.types().get(c.name());
            if (type == null) throw refuse("column " + c.name() + " of " + n + " is not in the catalog (added by the prepared transaction itself?)");
            if (c.toastUnchanged()) {
                if (!update) throw refuse("INSERT into " + n + " carries an unchanged TOASTed value for " + c.name());
                continue;   // absent: the applier leaves the target's value alone
            }
            out.add(new ColumnValue(c.name(), type, c.value()));
        }
        return out;
    }

    private static WriteSetRefusedException refuse(String message) {
        return new WriteSetRefusedException(message, WriteSetRefusedException.NOT_SUPPORTED);
    }
}
