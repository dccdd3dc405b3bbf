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
            Setting.of("sequencer", null, "sites whose member leads every view-change flush and orders messages, comma-separated in order of preference (default: the first site): the first member of the first listed site in the view, else the view's first member. Every site must name the same list and keep it when sites are added or removed (it may name removed sites; cluster add-site/remove-site and wanrep-deploy pin it)"),
            Setting.choice("execution", "symmetric", "who executes update transactions", "symmetric", "primary-copy", "local-copy"),
            Setting.choice("delivery", "safe", "total-order delivery guarantee for update transactions", "agreed", "safe", "opt-safe"),
            Setting.choice("queries", "snapshot", "read-only transactions: local snapshot, or middleware read locks", "snapshot", "locked"),
            Setting.choice("blocks", "exclusive", "interactive transaction blocks (autocommit off): exclusive (default): take an exclusive lock on every table at their first write; certify (experimental; any execution and delivery): run at their origin without cluster locks and certified at COMMIT (PREPARE TRANSACTION, one total-order round; needs max_prepared_transactions > 0; its write set, decoded at PREPARE, travels in the certification under write-set policies, see blocks.write_sets for symmetric execution); their statements wait at most 500 ms for a lock (then 40001); blocks with DDL or that advance a sequence take the exclusive lock", "certify", "exclusive"),
            Setting.choice("blocks.replay", "in-turn", "certified blocks that other sites replay from their statement log: in-turn (default): each runs once every transaction ordered before it has finished here, its COMMIT in the same query (one round trip to the replica, on the executor thread that committed the one before where there is one); overlapped: each runs as soon as its locks are granted and sends COMMIT in its turn (a second round trip; the replays' statements overlap the commits before them, which may help replicas with many cores and long blocks)", "in-turn", "overlapped"),
            Setting.choice("blocks.write_sets", "off", "certified blocks under symmetric execution: on: the block's write set, decoded at its origin's PREPARE TRANSACTION (a two-phase test_decoding slot per database), travels in its certification and the other sites apply it; off (default): they replay its statement log (cheaper: every site's PostgreSQL then decodes every transaction of its replica; pgbench's interactive tpcb-like, 8 clients at one site of 3: 497 tps on, 785 off). Write-set policies always ship write sets", "off", "on"),
            Setting.of("blocks.certification_window", "100000", "certified blocks: how many recent deliveries every site remembers to certify against; a block whose snapshot is older aborts (40001)"),
            Setting.choice("testing.fault_injection", "off", "lets clients cut this site off from other sites (SET wanrep.partitioned_from = 'a,b'; '' heals): what it receives from them is dropped, as in a partition: for history-check and tests only, never in production", "off", "on"),
            Setting.of("pool.size", "16", "backend connections per site for replicated execution"),
            Setting.of("writeset.appliers", "4", "write-set policies: connections per database that apply write sets shipped by other sites"),
            Setting.of("pool.wait_timeout_ms", "30000", "how long a request waits for a backend connection before SQLSTATE 53300"),
            Setting.of("flow.max_backlog", "1000", "flow control: new updates wait at their origin while any site of the primary view reports more delivered-but-unfinished transactions than this (0: off)"),
            Setting.of("flow.max_backlog_mb", "256", "flow control: new updates also wait at their origin while any site of the primary view reports more than this many MiB of SQL and data in its delivered-but-unfinished transactions (0: no such limit)"),
            Setting.of("flow.wait_timeout_ms", "30000", "flow control: how long an update waits for the backlogs to drain before SQLSTATE 53400 (nothing was ordered)"),
            Setting.of("audit.report_interval_ms", "500", "how often a site multicasts a digest of the outcomes (committed or failed, command tags, row counts, SQLSTATE) of the updates it finished, which the others compare with theirs; a site whose outcomes at least half of the view does not share stops (0: off)"),
            Setting.of("flow.report_interval_ms", "50", "flow control: how often a site multicasts its backlog when it changed (at least once a second)"),
            Setting.of("rejoin.log_window", "100000", "catch-up: how many of the latest ordered requests each site keeps in its log file (memory holds 8 bytes for each) to serve a site that rejoins; a site further behind cannot catch up from the log"),
            Setting.of("rejoin.log_max_mb", "1024", "catch-up: MiB of disk the latest ordered requests may take in the log file at most (the oldest go first), whatever rejoin.log_window allows"),
            Setting.of("rejoin.replay_per_second", "250", "catch-up: transactions per second a replay from the logs is expected to apply, until this site measured one; a site behind by more than a state transfer would take (its replica's size over rejoin.transfer_mb_per_second, plus 3 s) takes the transfer instead (0: always replay what the logs hold)"),
            Setting.of("rejoin.transfer_mb_per_second", "20", "catch-up: MiB per second a state transfer is expected to copy, until this site measured one"),
            Setting.of("rejoin.log_dir", null, "catch-up: directory of the site's ordered-request log file SITE.orderlog (default: none, the log is a temporary file in the system's temporary directory, deleted when the site stops; a lost tail only shortens what the site can serve); a state transfer also keeps its dumps of the donor's databases there while it runs (default: the system's temporary directory), and the mark SITE.transfer while it replaces the databases, so that a site that died meanwhile takes a transfer again"),
            Setting.of("proxy.max_clients", null, "client sessions the proxy serves at once; more are refused with SQLSTATE 53300 so that replication always has its connections (default: the replica's max_connections less superuser_reserved_connections, pool.size, write-set capture and appliers, and 5)"),
            Setting.of("proxy.max_clients_per_user", "0", "client sessions one user may have at once at this site; more are refused with SQLSTATE 53300 'too many connections for role' (0: no limit but proxy.max_clients)"),
            Setting.of("proxy.max_message_mb", "64", "largest client message accepted after authentication, in MiB (PostgreSQL allows 1 GiB); a longer one ends the session with SQLSTATE 54000. Before authentication the limits are PostgreSQL's: 10,000 bytes for the startup packet and for every other message"),
            Setting.of("proxy.buffer_budget_mb", null, "MiB that the client messages all sessions of this site buffer (requests up to Sync, COPY data gathered before ordering, named statements, the logs of open blocks) may hold together; a message past it gets SQLSTATE 53200 (out of memory) and its request is dropped (default: a quarter of the JVM's maximum heap)"),
            Setting.of("proxy.authentication_timeout_ms", "60000", "a client connection that has not completed its startup and authentication by then is closed (PostgreSQL's authentication_timeout)"),
            Setting.of("proxy.idle_session_timeout_ms", "0", "a session idle outside a transaction for this long is ended with SQLSTATE 57P05 (PostgreSQL's idle_session_timeout; 0: never)"),
            Setting.of("proxy.host", "127.0.0.1", "address the proxy listens on"),
            Setting.of("proxy.port", "6543", "port the proxy listens on"),
            Setting.of("proxy.tls.cert", "", "PEM certificate (then any intermediates) the proxy presents to clients that ask for TLS (SSLRequest), TLS 1.3 or 1.2; empty: no TLS, SSLRequest answered N"),
            Setting.of("proxy.tls.key", "", "PEM private key of proxy.tls.cert (PKCS#8 or PKCS#1/SEC1, unencrypted; keep it readable by its owner only)"),
            Setting.of("proxy.tls.ca", "", "PEM CA certificates: clients over TLS must present a certificate signed by one of them (PostgreSQL's clientcert=verify-ca); empty: none asked for"),
            Setting.choice("proxy.tls.clientcert", "verify-ca", "with proxy.tls.ca: verify-ca only checks the client certificate's signature; verify-full also requires its common name (CN) to be the user name, as PostgreSQL's clientcert=verify-full", "verify-ca", "verify-full"),
            Setting.choice("proxy.tls.require", "off", "on: refuse clients that did not negotiate TLS with FATAL 28000, as a pg_hba hostssl line does (a CancelRequest is still taken in plain text, as libpq sends it)", "off", "on"),
            Setting.choice("proxy.session_role", "client", "as whom client sessions run at the replica: replica-user: every session logs in as postgres.user (a superuser, so every proxy user has its rights); client (default): a session logs in as the client's own PostgreSQL role (with its password from users; none for trust users or SCRAM verifiers, so the replica must then trust the proxy's connections) and its updates run as that role at every site, so PostgreSQL's privileges (42501) refuse them at every site alike", "replica-user", "client"),
            Setting.of("gcs.host", "127.0.0.1", "address of this site's group-communication member"),
            Setting.of("gcs.port", "7800", "JGroups TCP port of this site's member"),
            Setting.of("gcs.jitter_ms", "0", "uniform jitter added to emulated WAN delays"),
            Setting.of("gcs.ack_interval_ms", "2", "minimum interval between stability acknowledgements"),
            Setting.choice("gcs.bootstrap", "on", "whether this site may start a new group's history with the others (on), or only join a group that has one (off: a site added to a running cluster by `cluster add-site`, which starts empty and must never begin a history of its own)", "on", "off"),
            Setting.of("gcs.secret_file", "", "file holding the key all sites share (base64 of 32 random bytes, mode 0600; `wanrep cluster up` and `wanrep-deploy init` make one): traffic between sites is encrypted and authenticated with it, and a process without it cannot join the group (empty: clear text, anyone who can reach gcs.port can join)"),
            Setting.of("postgres.host", "127.0.0.1", "this site's PostgreSQL replica"),
            Setting.of("postgres.port", "5432", "port of this site's PostgreSQL replica"),
            Setting.of("postgres.socket_dir", "", "Unix-domain socket directory of the replica on this host (empty: TCP); cheaper per message than loopback TCP"),
            Setting.of("postgres.user", "postgres", "user the proxy connects to its replica as"),
            Setting.of("postgres.password", "", "password of postgres.user (empty: none)"),
            Setting.choice("postgres.sslmode", "disable", "TLS from the proxy to its replica over TCP (a remote replica), as libpq's sslmode: require encrypts, verify-ca also checks the replica's certificate against postgres.sslrootcert, verify-full also its host name", "disable", "require", "verify-ca", "verify-full"),
            Setting.of("postgres.sslrootcert", "", "PEM CA certificates that sign the replica's certificate (postgres.sslmode verify-ca, verify-full)"),
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
