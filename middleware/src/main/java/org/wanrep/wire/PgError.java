package org.wanrep.wire;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * An ErrorResponse (or NoticeResponse): severity, SQLSTATE, message and optional detail/hint.
 * wanrep's own refusals are built here so that clients see them exactly like PostgreSQL errors.
 */
public record PgError(String severity, String sqlState, String message, String detail, String hint) {
    public static PgError error(String sqlState, String message) { return new PgError("ERROR", sqlState, message, null, null); }

    public static PgError fatal(String sqlState, String message) { return new PgError("FATAL", sqlState, message, null, null); }

    public PgError withDetail(String d) { return new PgError(severity, sqlState, message, d, hint); }

    public PgError withHint(String h) { return new PgError(severity, sqlState, message, detail, h); }

    public static PgError parse(WireMessage m) {
        Map<Character, String> f = fields(m);
        return new PgError(f.getOrDefault('S', "ERROR"), f.getOrDefault('C', "XX000"), f.getOrDefault('M', ""), f.get('D'), f.get('H'));
    }

    /** All fields of an ErrorResponse/NoticeResponse by their one-letter codes. */
    public static Map<Character, String> fields(WireMessage m) {
        Map<Character, String> f = new LinkedHashMap<>();
        PayloadReader r = new PayloadReader(m.payload());
        while (r.remaining() > 0) {
            byte code = r.int8();
            if (code == 0) break;
            f.put((char) code, r.cstring());
        }
        return f;
    }

    public WireMessage toMessage() {
        PayloadWriter w = new PayloadWriter();
        w.int8('S').cstring(severity).int8('V').cstring(severity).int8('C').cstring(sqlState).int8('M').cstring(message);
        if (detail != null) w.int8('D').cstring(detail);
        if (hint != null) w.int8('H').cstring(hint);
        w.int8(0);
        return w.message('E');
    }

    @Override public String toString() { return severity + " " + sqlState + ": " + message; }
}
