package org.wanrep.config;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The one registry of configuration keys: it drives validation, {@code docs/config.md} and
 * {@code SHOW CONFIG}. Any key may also be set for one site as {@code site.NAME.KEY}.
 */
public final class Settings {
    private Settings() {}

    public static final List<Setting> ALL = List.of(
            Setting.of("cluster.name", "wanrep", "group name shared by all sites of one cluster"),
            Setting.of("sites", null, "comma-separated site names in order (default: the latency matrix's sites)"),
            Setting.of("latency_matrix", "none", "WAN emulation: a preset (na4, na8, global5, ca-es-ch, lan), a CSV file, or none"),
            Setting.of("sequencer", null, "site whose member orders messages (default: the first site)"),
            Setting.choice("execution", "symmetric", "who executes update transactions", "symmetric", "primary-copy", "local-copy"),
            Setting.choice("delivery", "safe", "total-order delivery guarantee for update transactions", "agreed", "safe", "opt-safe"),
            Setting.choice("queries", "snapshot", "read-only transactions: local snapshot, or middleware read locks", "snapshot", "locked"),
            Setting.choice("blocks", "certify", "interactive transaction blocks (autocommit off) under symmetric execution with agreed or safe delivery: run at their origin without cluster locks and certified at COMMIT (PREPARE TRANSACTION, one total-order round; needs max_prepared_transactions > 0), or take an exclusive lock on every table at their first write; blocks with DDL or that advance a sequence, and every block under write-set policies, take the exclusive lock", "certify", "exclusive"),
            Setting.of("blocks.certification_window", "100000", "certified blocks: how many recent deliveries every site remembers to certify against; a block whose snapshot is older aborts (40001)"),
            Setting.choice("testing.fault_injection", "off", "lets clients cut this site off from other sites (SET wanrep.partitioned_from = 'a,b'; '' heals): what it receives from them is dropped, as in a partition: for history-check and tests only, never in production", "off", "on"),
            Setting.of("pool.size", "16", "backend connections per site for replicated execution"),
            Setting.of("writeset.appliers", "4", "write-set policies: connections per database that apply write sets shipped by other sites"),
            Setting.of("pool.wait_timeout_ms", "30000", "how long a request waits for a backend connection before SQLSTATE 53300"),
            Setting.of("flow.max_backlog", "1000", "flow control: new updates wait at their origin while any site of the primary view reports more delivered-but-unfinished transactions than this (0: off)"),
            Setting.of("flow.wait_timeout_ms", "30000", "flow control: how long an update waits for the backlogs to drain before SQLSTATE 53400 (nothing was ordered)"),
            Setting.of("flow.report_interval_ms", "50", "flow control: how often a site multicasts its backlog when it changed (at least once a second)"),
            Setting.of("proxy.max_clients", null, "client sessions the proxy serves at once; more are refused with SQLSTATE 53300 so that replication always has its connections (default: the replica's max_connections less superuser_reserved_connections, pool.size, write-set capture and appliers, and 5)"),
            Setting.of("proxy.host", "127.0.0.1", "address the proxy listens on"),
            Setting.of("proxy.port", "6543", "port the proxy listens on"),
            Setting.of("gcs.host", "127.0.0.1", "address of this site's group-communication member"),
            Setting.of("gcs.port", "7800", "JGroups TCP port of this site's member"),
            Setting.of("gcs.jitter_ms", "0", "uniform jitter added to emulated WAN delays"),
            Setting.of("gcs.ack_interval_ms", "2", "minimum interval between stability acknowledgements"),
            Setting.of("postgres.host", "127.0.0.1", "this site's PostgreSQL replica"),
            Setting.of("postgres.port", "5432", "port of this site's PostgreSQL replica"),
            Setting.of("postgres.socket_dir", "", "Unix-domain socket directory of the replica on this host (empty: TCP); cheaper per message than loopback TCP"),
            Setting.of("postgres.user", "postgres", "user the proxy connects to its replica as"),
            Setting.of("postgres.password", "", "password of postgres.user (empty: none)"),
            Setting.of("users", "postgres:trust", "client users: comma-separated name:method[:password], method trust, md5 or scram-sha-256"));

    private static final Map<String, Setting> BY_KEY = new LinkedHashMap<>();
    static { for (Setting s : ALL) BY_KEY.put(s.key(), s); }

    public static Setting get(String key) { return BY_KEY.get(key); }

    /** Keys with a free-form suffix, e.g. {@code functions.NAME.writes}. */
    public static boolean isPatternKey(String key) {
        return key.matches("functions\\.[^.]+(\\.[^.]+)?\\.(reads|writes)") || key.matches("tables\\.[^.]+(\\.[^.]+)?\\.primary");
    }

    /** Markdown documentation of every key, for docs/config.md. */
    public static String markdown() {
        StringBuilder b = new StringBuilder("| key | default | description |\n|---|---|---|\n");
        for (Setting s : ALL) {
            String d = s.description() + (s.allowed().isEmpty() ? "" : " (" + String.join(", ", s.allowed()) + ")");
            b.append("| `").append(s.key()).append("` | ").append(s.defaultValue() == null ? "(derived)" : "`" + s.defaultValue() + "`")
                    .append(" | ").append(d).append(" |\n");
        }
        b.append("| `functions.NAME.reads` / `.writes` | | tables a function reads / writes, overriding analysis of its body |\n");
        b.append("| `tables.NAME.primary` | spread by name | primary-copy: the site that executes transactions writing table NAME (`schema.table` or `table`) |\n");
        b.append("| `site.SITE.KEY` | | any key above for one site only, e.g. `site.boston.proxy.port` |\n");
        return b.toString();
    }
}
