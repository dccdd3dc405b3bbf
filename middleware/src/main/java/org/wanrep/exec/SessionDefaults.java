package org.wanrep.exec;

import org.wanrep.backend.BackendConnection;
import org.wanrep.txn.TxnExecutor;
import org.wanrep.wire.PgError;
import org.wanrep.wire.WireMessage;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;

/**
 * The settings a pooled replica session has after RESET ALL, read once per connection, so that a replicated
 * transaction sets only what its origin's session has otherwise. Every transaction on a pooled connection
 * begins with RESET ALL (whatever an earlier one left at session level is gone, a function body's
 * {@code set_config(..., false)} included), then {@code set_config(name, value, true)} for each shipped
 * setting whose value differs from these. Measured on PostgreSQL 15 with pgbench's TPC-B request: each
 * {@code set_config} call costs about 7 us of server CPU, and shipping all fourteen carried settings and the
 * two timeouts every time took a replica from ~95 to ~132 us per transaction; RESET ALL costs ~4 us.
 */
final class SessionDefaults {
    private SessionDefaults() {}

    /**
     * Values read the way an origin reads its session's ({@code frontend.SessionSettings}: pg_settings' setting,
     * hex-coded UTF-8), so that equal means equal whatever the connection's encoding.
     */
    private static final String READ = "RESET ALL; SELECT name, pg_catalog.encode(pg_catalog.convert_to(setting, 'UTF8'), 'hex')"
            + " FROM pg_catalog.pg_settings";

    /** {@code c}'s values after RESET ALL, read now if this connection has not been asked before. */
    static Map<String, String> of(BackendConnection c) throws IOException {
        Map<String, String> known = c.resetValues();
        if (known != null) return known;
        Map<String, String> read = new HashMap<>();
        PgError err = null;
        // a cancel still on its way (a revoked attempt's) may land on this read: it only reads, so read again
        for (int attempt = 0; attempt < 20; attempt++) {
            read.clear();
            c.send(WireMessage.query(READ));
            c.flush();
            err = null;
            while (!c.tracker().idle()) {
                WireMessage m = c.read();
                if (m.kind() == 'E' && err == null) err = PgError.parse(m);
                if (m.kind() == 'D') {
                    java.util.List<String> row = org.wanrep.wire.Messages.dataRowValues(m);
                    if (row.get(0) != null && row.get(1) != null)
                        read.put(row.get(0), new String(HexFormat.of().parseHex(row.get(1)), StandardCharsets.UTF_8));
                }
            }
            if (err == null || !TxnExecutor.transientState(err.sqlState())) break;
        }
        if (err != null) throw new IOException("reading the replica session's settings: " + err);
        Map<String, String> values = shared(Map.copyOf(read));
        c.resetValues(values);
        return values;
    }

    /**
     * One map per distinct set of defaults (a replica's connections nearly always have the same), so that what is
     * derived from a connection's defaults can be kept by the map's identity. Bounded: a set past the limit is used
     * but not kept.
     */
    private static final java.util.concurrent.ConcurrentHashMap<Map<String, String>, Map<String, String>> SHARED = new java.util.concurrent.ConcurrentHashMap<>();

    private static Map<String, String> shared(Map<String, String> values) {
        Map<String, String> known = SHARED.get(values);
        if (known == null && SHARED.size() < 64) known = SHARED.putIfAbsent(values, values);
        return known != null ? known : values;
    }
}
