package org.wanrep.txn;

import org.wanrep.lock.LockMode;
import org.wanrep.lock.TableSet;
import org.wanrep.sql.SqlLexer;
import org.wanrep.sql.SqlText;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which rows a certifying block's statement locked at their newest version (pure). Under read committed, PostgreSQL's
 * UPDATE and DELETE modify the newest committed version of each row they lock, whatever their snapshot saw; so for such
 * a row the block saw every write of it that had been made when the statement locked it, and certification may count
 * only later writes of it (see {@link Certifier}). That holds only where nothing else of the statement read other rows
 * on its older snapshot, and where the block had not read the row before. So a statement qualifies only when it is one
 * UPDATE or DELETE of one table by key (every access of it pinned by key, written), with no subquery and no code the
 * classifier does not read; and it must have modified every row it names ({@link #modifiedAll}): a key with no row
 * locked nothing.
 */
public final class RowPositions {
    private RowPositions() {}

    /**
     * The rows (table, {@link TableSet#ROW}, key) that the statement {@code texts} (analyzed as {@code tables}) locks by
     * key and that nothing of the block touched before ({@code before}: its reads and writes so far); empty when the
     * statement does not qualify.
     */
    public static Set<String> untouchedKeyedRows(List<String> texts, TableSet tables, TableSet before) {
        return untouchedKeyedRows(texts, tables, new TableSet.Union().add(before));
    }

    /** As {@link #untouchedKeyedRows(List, TableSet, TableSet)}, the block's sets so far not united yet. */
    public static Set<String> untouchedKeyedRows(List<String> texts, TableSet tables, TableSet.Union before) {
        if (texts.size() != 1 || tables.all() || before.all() || tables.writes().size() != 1) return Set.of();
        String text = texts.get(0);
        if (!startsUpdateOrDelete(text)) return Set.of();
        // one statement, reading no other rows on its snapshot (a subquery, a CTE); a word that only looks like one
        // (a column "selected") just loses the position
        int semicolon = text.indexOf(';');
        if (semicolon >= 0 && !text.substring(semicolon + 1).isBlank()) return Set.of();
        if (SqlText.containsIgnoreCase(text, "select") || SqlText.containsIgnoreCase(text, "with")) return Set.of();
        String table = tables.writes().iterator().next();
        if (!tables.rows().keySet().equals(Set.of(table))) return Set.of();
        for (String r : tables.reads()) if (!r.equals(table)) return Set.of();
        Map<String, LockMode> keys = tables.rows().get(table);
        if (keys.isEmpty()) return Set.of();
        for (LockMode m : keys.values()) if (m != LockMode.WRITE) return Set.of();
        // the block reached the table before without keys (a scan): it may have read these rows on an older snapshot
        Map<String, LockMode> earlier = before.rowsOf(table);
        boolean reachedWhole = earlier == null && before.touches(table);
        if (reachedWhole) return Set.of();
        Set<String> out = new HashSet<>();
        for (String k : keys.keySet()) if (earlier == null || !earlier.containsKey(k)) out.add(table + TableSet.ROW + k);
        return out;
    }

    /** Whether the statement's reply ({@code tag}: its command tag) modified as many rows as it names by key. */
    public static boolean modifiedAll(String tag, int untouched, TableSet tables) {
        if (tag == null || untouched == 0) return false;
        if (!(tag.startsWith("UPDATE ") || tag.startsWith("DELETE ")) || tag.length() == 7 || tag.length() > 7 + 18) return false;
        long count = 0;
        for (int i = 7; i < tag.length(); i++) {
            char c = tag.charAt(i);
            if (c < '0' || c > '9') return false;
            count = count * 10 + (c - '0');
        }
        int named = 0;
        for (Map<String, LockMode> keys : tables.rows().values()) named += keys.size();
        return count == named;
    }

    /** Whether {@code text}, after white space, begins with the word UPDATE or DELETE (in any case) and a white space. */
    static boolean startsUpdateOrDelete(String text) {
        int i = 0, n = text.length();
        while (i < n && SqlLexer.space(text.charAt(i))) i++;
        if (i + 6 >= n || !SqlLexer.space(text.charAt(i + 6))) return false;
        return SqlLexer.asciiFoldedEquals(text, i, "update") || SqlLexer.asciiFoldedEquals(text, i, "delete");
    }
}
