package org.wanrep.writeset.capture;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import org.wanrep.writeset.ColumnValue;
import org.wanrep.writeset.RowChange;
import org.wanrep.writeset.RowChange.Action;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Turns one line of wal2json format-version 2 output (options include-xids, include-pk,
 * include-types, include-type-oids, include-not-null, include-origin) into a {@link Wal2JsonRecord}.
 * Pure: no I/O, tested on captured sample lines.
 * <p>
 * Value rules, from what wal2json 2.5 writes:
 * <ul>
 *   <li>int2/4/8, oid, float4/8 and numeric come as JSON numbers: kept as their exact source text
 *       (streaming parser, never through double or BigDecimal), which is PostgreSQL's output text.</li>
 *   <li>booleans come as JSON true/false: text "true"/"false", which PostgreSQL reads back.</li>
 *   <li>bytea comes as hex WITHOUT the leading {@code \x}: it is put back, otherwise the applier would
 *       read the digits in escape format and store different bytes.</li>
 *   <li>NaN/Infinity of numeric/float types come as null: see {@link NumericNullPolicy}.</li>
 *   <li>a column an UPDATE left TOASTed and unchanged is not listed: it stays absent.</li>
 * </ul>
 */
public final class Wal2JsonParser {
    private static final int BYTEA = 17, FLOAT4 = 700, FLOAT8 = 701, NUMERIC = 1700;

    private final JsonFactory json;
    private final NumericNullPolicy numericNulls;

    public Wal2JsonParser(NumericNullPolicy numericNulls, int maxValueChars) {
        this.numericNulls = numericNulls;
        // numeric allows 131072 digits before the point: Jackson's default limit of 1000 would refuse them
        this.json = JsonFactory.builder().streamReadConstraints(StreamReadConstraints.builder()
                .maxNumberLength(200_000).maxStringLength(Math.max(1, maxValueChars)).build()).build();
    }

    public Wal2JsonRecord parse(String line) throws IOException {
        byte[] b = line.getBytes(StandardCharsets.UTF_8);
        return parse(b, 0, b.length);
    }

    public Wal2JsonRecord parse(byte[] data, int offset, int length) throws IOException {
        try (JsonParser p = json.createParser(data, offset, length)) {
            return parse(p);
        }
    }

    /** A column as wal2json lists it, before the value rules apply. */
    private record RawColumn(String name, String type, int typeOid, String value, Boolean optional) {}

    private Wal2JsonRecord parse(JsonParser p) throws IOException {
        expect(p.nextToken(), JsonToken.START_OBJECT, p);
        String action = null, schema = null, table = null, prefix = null, content = null, nextLsn = null;
        long xid = -1, origin = 0;
        boolean transactional = false;
        List<RawColumn> columns = null, identity = null;
        List<String> pk = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            JsonToken t = p.nextToken();
            switch (field) {
                case "action" -> action = p.getText();
                case "xid" -> xid = p.getLongValue();
                case "origin" -> origin = t == JsonToken.VALUE_NULL ? 0 : p.getLongValue();
                case "nextlsn" -> nextLsn = p.getText();
                case "schema" -> schema = p.getText();
                case "table" -> table = p.getText();
                case "prefix" -> prefix = p.getText();
                case "content" -> content = p.getText();
                case "transactional" -> transactional = t == JsonToken.VALUE_TRUE;
                case "columns" -> columns = columns(p);
                case "identity" -> identity = columns(p);
                case "pk" -> {
                    pk = new ArrayList<>();
                    for (RawColumn c : columns(p)) pk.add(c.name());
                }
                default -> p.skipChildren();   // lsn, timestamp, ...
            }
        }
        if (action == null) throw new IOException("wal2json record without action");
        return switch (action) {
            case "B" -> new Wal2JsonRecord.Begin(xid, origin);
            case "C" -> {
                if (nextLsn == null) throw new IOException("commit record without nextlsn: start the slot with include-lsn");
                yield new Wal2JsonRecord.Commit(xid, origin, nextLsn);
            }
            case "M" -> new Wal2JsonRecord.Message(xid, origin, transactional, prefix, content);
            case "T" -> new Wal2JsonRecord.Truncate(xid, origin, schema, table);
            case "I", "U", "D" -> row(action, xid, origin, schema, table, columns, identity, pk);
            default -> throw new IOException("unknown wal2json action " + action);
        };
    }

    private Wal2JsonRecord.Row row(String action, long xid, long origin, String schema, String table,
                                   List<RawColumn> columns, List<RawColumn> identity, List<String> pk) throws IOException {
        if (schema == null || table == null) throw new IOException("row record without schema/table");
        if (pk == null) throw new IOException("row record without pk: start the slot with include-pk");
        String where = schema + "." + table;
        List<String> problems = new ArrayList<>();
        Set<String> pkCols = new HashSet<>(pk);
        List<ColumnValue> key = List.of(), values = List.of();
        Action a = switch (action) { case "I" -> Action.INSERT; case "U" -> Action.UPDATE; default -> Action.DELETE; };
        if (a != Action.DELETE) {
            if (columns == null) throw new IOException(action + " record without columns");
            values = values(columns, pkCols, where, problems);
        }
        if (a != Action.INSERT) {
            if (identity == null || identity.isEmpty())
                problems.add(a + " on " + where + " without old-row identity: the table needs a primary key or REPLICA IDENTITY FULL");
            else
                key = values(identity, pkCols.isEmpty() ? Set.of() : new HashSet<>(pk), where, problems);
        }
        return new Wal2JsonRecord.Row(xid, origin, new RowChange(schema, table, a, key, values), !pk.isEmpty(), List.copyOf(problems));
    }

    private List<ColumnValue> values(List<RawColumn> raw, Set<String> pkCols, String where, List<String> problems) {
        List<ColumnValue> out = new ArrayList<>(raw.size());
        for (RawColumn c : raw) {
            if (c.value() == null && isNumericType(c)) {
                boolean certainlyNotNull = Boolean.FALSE.equals(c.optional()) || pkCols.contains(c.name());
                if (certainlyNotNull)
                    problems.add("column " + where + "." + c.name() + " (" + c.type() + ") holds NaN or Infinity, which wal2json 2.5 cannot ship (it writes them as null)");
                else if (numericNulls == NumericNullPolicy.REFUSE)
                    problems.add("column " + where + "." + c.name() + " (" + c.type() + ") is null, which wal2json 2.5 also writes for NaN/Infinity (policy REFUSE)");
            }
            out.add(new ColumnValue(c.name(), c.type(), c.value()));
        }
        return out;
    }

    private static boolean isNumericType(RawColumn c) {
        if (c.typeOid() > 0) return c.typeOid() == NUMERIC || c.typeOid() == FLOAT4 || c.typeOid() == FLOAT8;
        String t = c.type();
        return t.startsWith("numeric") || t.equals("real") || t.equals("double precision");
    }

    private static List<RawColumn> columns(JsonParser p) throws IOException {
        expect(p.currentToken(), JsonToken.START_ARRAY, p);
        List<RawColumn> out = new ArrayList<>();
        while (p.nextToken() == JsonToken.START_OBJECT) {
            String name = null, type = null, value = null;
            int oid = 0;
            Boolean optional = null;
            JsonToken valueToken = null;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String f = p.currentName();
                JsonToken t = p.nextToken();
                switch (f) {
                    case "name" -> name = p.getText();
                    case "type" -> type = p.getText();
                    case "typeoid" -> oid = p.getIntValue();
                    case "optional" -> optional = t == JsonToken.VALUE_TRUE;
                    case "value" -> {
                        valueToken = t;
                        value = switch (t) {
                            case VALUE_NULL -> null;
                            case VALUE_TRUE -> "true";
                            case VALUE_FALSE -> "false";
                            case VALUE_STRING, VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> p.getText();   // numbers: exact source text
                            default -> throw new IOException("unexpected value token " + t + " for column " + name);
                        };
                    }
                    default -> p.skipChildren();
                }
            }
            if (name == null || type == null) throw new IOException("column without name or type: start the slot with include-types");
            if (valueToken == JsonToken.VALUE_STRING && (oid == BYTEA || (oid == 0 && type.equals("bytea")))) value = "\\x" + value;
            out.add(new RawColumn(name, type, oid, value, optional));
        }
        expect(p.currentToken(), JsonToken.END_ARRAY, p);
        return out;
    }

    private static void expect(JsonToken got, JsonToken want, JsonParser p) throws IOException {
        if (got != want) throw new IOException("malformed wal2json record: expected " + want + ", got " + got + " at " + p.currentLocation());
    }
}
