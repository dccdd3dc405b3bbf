package org.wanrep.writeset;

import java.util.Objects;

/**
 * One column of a captured row: its name, its PostgreSQL type as {@code format_type} spells it
 * (typmod included, e.g. {@code numeric(40,10)}, {@code character(3)}, {@code integer[]}), and its
 * value in PostgreSQL's text form, or {@code null} for SQL NULL. Text form plus type round-trips
 * exactly for every type, which binary or JSON-native forms do not (numeric precision, bytea, arrays).
 */
public record ColumnValue(String name, String type, String value) {
    public ColumnValue {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
    }

    public boolean isNull() { return value == null; }
}
