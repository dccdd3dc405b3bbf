package org.wanrep.writeset;

import java.util.List;
import java.util.Objects;

/**
 * One row written by a transaction.
 * <ul>
 *   <li>{@code key}: the columns identifying the row as it was before (primary key, or every column
 *       under REPLICA IDENTITY FULL); empty for INSERT.</li>
 *   <li>{@code values}: the new row for INSERT/UPDATE, empty for DELETE. A column an UPDATE left as an
 *       unchanged TOASTed value is ABSENT from this list, never present as NULL: applying it must leave
 *       the target's value alone.</li>
 * </ul>
 */
public record RowChange(String schema, String table, Action action, List<ColumnValue> key, List<ColumnValue> values) {
    public enum Action { INSERT, UPDATE, DELETE }

    public RowChange {
        Objects.requireNonNull(schema, "schema");
        Objects.requireNonNull(table, "table");
        Objects.requireNonNull(action, "action");
        key = List.copyOf(key);
        values = List.copyOf(values);
    }

    /** Schema-qualified name, unquoted ("public.t"), as the middleware names tables. */
    public String qualifiedTable() { return schema + "." + table; }

    /** Rough in-memory size, for size limits and metrics. */
    public long approximateBytes() {
        long n = 32 + schema.length() + table.length();
        for (ColumnValue c : key) n += 16 + c.name().length() + (c.value() == null ? 0 : c.value().length());
        for (ColumnValue c : values) n += 16 + c.name().length() + (c.value() == null ? 0 : c.value().length());
        return n;
    }
}
