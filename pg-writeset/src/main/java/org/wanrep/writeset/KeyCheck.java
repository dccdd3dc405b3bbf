package org.wanrep.writeset;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Which replicated tables can ship write sets. wal2json silently drops UPDATE and DELETE of a table
 * with neither primary key nor replica identity (only a server WARNING), so such a write set would
 * be quietly incomplete: the middleware asks here before executing in a write-set mode and refuses.
 */
public final class KeyCheck {
    public enum Identity { PRIMARY_KEY, INDEX, FULL, NONE }

    private KeyCheck() {}

    private static final String SQL = """
            SELECT c.relreplident,
                   EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary),
                   EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisreplident)
            FROM pg_class c WHERE c.oid = to_regclass(?)""";

    /**
     * The identity of each table, named as SQL would name it ({@code t}, {@code s.t},
     * {@code "Mixed"."Case"}; unqualified names follow the connection's search_path).
     * A table that does not exist is an error (42P01).
     */
    public static Map<String, Identity> identities(Connection c, Collection<String> tables) throws SQLException {
        Map<String, Identity> out = new LinkedHashMap<>();
        try (PreparedStatement ps = c.prepareStatement(SQL)) {
            for (String t : tables) {
                ps.setString(1, t);
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) throw new SQLException("relation \"" + t + "\" does not exist", "42P01");
                    String replident = rs.getString(1);
                    boolean pk = rs.getBoolean(2), replIndex = rs.getBoolean(3);
                    out.put(t, switch (replident) {
                        case "f" -> Identity.FULL;
                        case "i" -> replIndex ? Identity.INDEX : Identity.NONE;
                        case "d" -> pk ? Identity.PRIMARY_KEY : Identity.NONE;
                        default -> Identity.NONE;   // 'n': REPLICA IDENTITY NOTHING
                    });
                }
            }
        }
        return out;
    }

    /** Throws {@link WriteSetRefusedException} (SQLSTATE 55000) naming every table that has no identity. */
    public static void requireIdentity(Connection c, Collection<String> tables) throws SQLException {
        List<String> missing = new ArrayList<>();
        identities(c, tables).forEach((t, id) -> { if (id == Identity.NONE) missing.add(t); });
        if (!missing.isEmpty()) throw noIdentity(missing);
    }

    public static WriteSetRefusedException noIdentity(List<String> tables) {
        return new WriteSetRefusedException((tables.size() == 1 ? "table " : "tables ") + String.join(", ", tables)
                + (tables.size() == 1 ? " has" : " have") + " no primary key or replica identity, so write-set replication cannot"
                + " capture its updates and deletes; add a primary key or ALTER TABLE ... REPLICA IDENTITY FULL",
                WriteSetRefusedException.NO_IDENTITY);
    }

    /** {@code "schema"."table"}, as wal2json's unquoted names must be handed to {@link #identities}. */
    public static String quoted(String schema, String table) {
        return "\"" + schema.replace("\"", "\"\"") + "\".\"" + table.replace("\"", "\"\"") + "\"";
    }
}
