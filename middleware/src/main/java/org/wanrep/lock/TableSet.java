package org.wanrep.lock;

import java.util.Set;
import java.util.TreeSet;

/**
 * The tables a transaction locks. {@code all} means every table (unknown SQL, DDL): it is realized
 * as a write lock on a resource every transaction also takes in read mode, so it excludes everyone
 * without the lock manager having to know all tables.
 */
public record TableSet(Set<String> reads, Set<String> writes, boolean all) {
    public static final String EVERYTHING = "*";

    public TableSet {
        reads = Set.copyOf(reads);
        writes = Set.copyOf(writes);
    }

    public static TableSet allTables() { return new TableSet(Set.of(), Set.of(), true); }
    public static TableSet of(Set<String> reads, Set<String> writes) { return new TableSet(reads, writes, false); }

    /** Resources with their strongest mode; a table both read and written is written. */
    java.util.SortedMap<String, LockMode> resources() {
        java.util.SortedMap<String, LockMode> m = new java.util.TreeMap<>();
        m.put(EVERYTHING, all ? LockMode.WRITE : LockMode.READ);
        if (!all) {
            for (String r : reads) m.put(r, LockMode.READ);
            for (String w : writes) m.put(w, LockMode.WRITE);
        }
        return m;
    }

    public boolean readOnly() { return !all && writes.isEmpty(); }

    @Override public String toString() {
        if (all) return "{all tables}";
        Set<String> r = new TreeSet<>(reads);
        r.removeAll(writes);
        return "{read " + r + ", write " + new TreeSet<>(writes) + "}";
    }
}
