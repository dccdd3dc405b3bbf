package org.wanrep.lock;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The tables a transaction locks. {@code all} means every table (unknown SQL, DDL): it is realized
 * as a write lock on a resource every transaction also takes in read mode, so it excludes everyone
 * without the lock manager having to know all tables.
 *
 * <p>{@code reads} and {@code writes} name every table read or written (what execution policies
 * look at). A table in {@code rows} is locked by row instead: every access of the request to it
 * showed its rows, so it takes an intention lock on the table (a write intention if it is in
 * {@code writes}) and a lock per (table, key); an empty key map locks no row (an insert into a
 * table without unique keys: its fresh rows no other statement can name by key). Rows are only
 * exact when every site derives the same keys from the same request text; a table some statement
 * reaches without shown rows must not be here.
 */
public record TableSet(Set<String> reads, Set<String> writes, boolean all, Map<String, Map<String, LockMode>> rows) {
    public static final String EVERYTHING = "*";
    /** Separates table and key in a row resource; PostgreSQL text cannot contain NUL. */
    public static final char ROW = '\0';

    public TableSet {
        reads = Set.copyOf(reads);
        writes = Set.copyOf(writes);
        if (all || rows.isEmpty()) rows = Map.of();
        else {   // immutable all the way down, built once (every statement and every delivery makes one)
            @SuppressWarnings("unchecked")
            Map.Entry<String, Map<String, LockMode>>[] es = new Map.Entry[rows.size()];
            int i = 0;
            for (var e : rows.entrySet()) es[i++] = Map.entry(e.getKey(), Map.copyOf(e.getValue()));
            rows = Map.ofEntries(es);
        }
    }

    public TableSet(Set<String> reads, Set<String> writes, boolean all) { this(reads, writes, all, Map.of()); }

    /**
     * Pseudo-table of session order: an autocommit request locks its origin session's row in it, so that at
     * every site a client session's transactions run in the order the session sent them. Non-conflicting
     * transactions may otherwise commit out of GSN order at a site, and a reader there could see a session's
     * later update without its earlier one (1-copy-serializable still, but not what that client did).
     * Certification ignores it (no table of that name exists; {@link #writes} never holds it).
     */
    public static final String SESSION = " session";

    /** This set plus the lock of {@code session}'s order (every table already excludes everyone). */
    public TableSet inSession(String session) {
        if (all) return this;
        Map<String, Map<String, LockMode>> r = new HashMap<>(rows);
        r.put(SESSION, Map.of(session, LockMode.WRITE));
        return new TableSet(reads, writes, false, r);
    }

    public static TableSet allTables() { return new TableSet(Set.of(), Set.of(), true); }
    public static TableSet of(Set<String> reads, Set<String> writes) { return new TableSet(reads, writes, false); }

    /** Resources with their strongest mode; a table both read and written is written. */
    java.util.SortedMap<String, LockMode> resources() {
        java.util.SortedMap<String, LockMode> m = new TreeMap<>();
        m.put(EVERYTHING, all ? LockMode.WRITE : LockMode.READ);
        if (all) return m;
        for (String r : reads) m.put(r, LockMode.READ);
        for (String w : writes) m.put(w, LockMode.WRITE);
        for (var t : rows.entrySet()) {
            // a written row-level table (an insert of fresh rows too) intends to write
            boolean writesRows = writes.contains(t.getKey());
            for (var k : t.getValue().entrySet()) {
                m.merge(t.getKey() + ROW + k.getKey(), k.getValue(), LockMode::join);
                writesRows |= k.getValue() == LockMode.WRITE;
            }
            m.put(t.getKey(), writesRows ? LockMode.INTENT_WRITE : LockMode.INTENT_READ);
        }
        return m;
    }

    /** Both requests' locks: a table row-level in one and reached without rows in the other is locked whole. */
    public static TableSet union(TableSet a, TableSet b) { return union(List.of(a, b)); }

    /**
     * The locks of all of {@code sets} at once (a request's statements), without copying every map once per statement
     * as a pairwise fold would: a table stays row-level only if every set that reaches it shows its rows, with each
     * row's strongest mode; a table some set reaches without rows is locked whole; everything if any set is.
     */
    public static TableSet union(List<TableSet> sets) {
        if (sets.size() == 1) return sets.get(0);
        Union u = new Union();
        for (TableSet s : sets) {
            if (s.all) return allTables();
            u.add(s);
        }
        return u.toTableSet();
    }

    /**
     * {@link #union(List)} of sets given one at a time, without copying what came before at each (a certifying block
     * adds each statement's set: a fold of unions copied the whole block's rows once per statement).
     */
    public static final class Union {
        private final Set<String> reads = new HashSet<>(), writes = new HashSet<>(), whole = new HashSet<>();
        private final Map<String, Map<String, LockMode>> rows = new HashMap<>();
        private boolean all;
        /** The union as of the last {@link #add}, made when first asked. */
        private TableSet made;

        public Union add(TableSet s) {
            made = null;
            if (s.all) all = true;
            reads.addAll(s.reads);
            writes.addAll(s.writes);
            for (String t : s.reads) if (!s.rows.containsKey(t)) whole.add(t);
            for (String t : s.writes) if (!s.rows.containsKey(t)) whole.add(t);
            for (var e : s.rows.entrySet()) {
                Map<String, LockMode> keys = rows.computeIfAbsent(e.getKey(), k -> new HashMap<>());
                e.getValue().forEach((k, m) -> keys.merge(k, m, LockMode::join));
            }
            return this;
        }

        public boolean all() { return all; }

        /** Whether some set read or wrote {@code table}. */
        public boolean touches(String table) { return reads.contains(table) || writes.contains(table); }

        /** The keys of {@code table}'s rows, if it is locked by row in the union (no set reached it whole), else null. */
        public Map<String, LockMode> rowsOf(String table) {
            return all || whole.contains(table) ? null : rows.get(table);
        }

        public TableSet toTableSet() {
            if (made != null) return made;
            if (all) return made = allTables();
            Map<String, Map<String, LockMode>> r = new HashMap<>(rows);
            r.keySet().removeAll(whole);
            return made = new TableSet(reads, writes, false, r);
        }
    }

    private boolean touches(String t) { return reads.contains(t) || writes.contains(t) || rows.containsKey(t); }

    public boolean readOnly() { return !all && writes.isEmpty(); }

    @Override public String toString() {
        if (all) return "{all tables}";
        Set<String> r = new TreeSet<>(reads);
        r.removeAll(writes);
        String s = "{read " + r + ", write " + new TreeSet<>(writes);
        if (!rows.isEmpty()) {
            Map<String, Map<String, LockMode>> sorted = new TreeMap<>();
            rows.forEach((t, k) -> sorted.put(t, new TreeMap<>(k)));
            s += ", rows " + sorted.toString().replace(ROW, '|');
        }
        return s + "}";
    }
}
