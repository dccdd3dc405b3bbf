package org.wanrep.site;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.wanrep.auth.UserDirectory;
import org.wanrep.backend.BackendPool;
import org.wanrep.frontend.SessionLimit;
import org.wanrep.backend.BackendTarget;
import org.wanrep.config.Config;
import org.wanrep.exec.WireTxnExecutor;
import org.wanrep.frontend.CancelRegistry;
import org.wanrep.frontend.ClientLimits;
import org.wanrep.frontend.ProxyServer;
import org.wanrep.frontend.SiteContext;
import org.wanrep.gcs.Delivery;
import org.wanrep.txn.FlowControl;
import org.wanrep.gcs.jgroups.GcsSettings;
import org.wanrep.gcs.jgroups.JGroupsGcs;
import org.wanrep.gcs.wan.LatencyMatrix;
import org.wanrep.exec.WriteSetChannel;
import org.wanrep.txn.ExecutionPolicy;
import org.wanrep.txn.ReplicationEngine;
import org.wanrep.txn.WriteSetIo;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * One wanrep site: the proxy clients connect to, the group member, the replication engine and the
 * connections to this site's PostgreSQL replica, all built from the configuration.
 */
public final class Site implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Site.class);

    private final String name;
    private final BackendPool pool;
    private final WireTxnExecutor executor;
    private final ReplicationEngine engine;
    private final JGroupsGcs gcs;
    private final ProxyServer proxy;
    private final WriteSetChannel channel;
    private final java.util.concurrent.atomic.AtomicBoolean stopped = new java.util.concurrent.atomic.AtomicBoolean();
    private final java.util.concurrent.CountDownLatch down = new java.util.concurrent.CountDownLatch(1);
    /** Why the site stopped by itself (fail-stop), or null. */
    private final java.util.concurrent.atomic.AtomicReference<String> stopReason = new java.util.concurrent.atomic.AtomicReference<>();
    private volatile boolean removed;

    /** A site that cannot start or go on: its replica no longer follows the others. */
    public static final class SiteStoppedException extends Exception {
        public SiteStoppedException(String message) { super(message); }
    }

    private Site(String name, BackendPool pool, WireTxnExecutor executor, ReplicationEngine engine, JGroupsGcs gcs, ProxyServer proxy,
                 WriteSetChannel channel) {
        this.channel = channel;
        this.name = name;
        this.pool = pool;
        this.executor = executor;
        this.engine = engine;
        this.gcs = gcs;
        this.proxy = proxy;
    }

    /** The cluster's site names: the {@code sites} setting, else the latency matrix's. */
    public static List<String> sites(Config c) {
        String s = c.get("sites");
        if (s != null && !s.isBlank()) return Arrays.stream(s.split(",")).map(String::trim).filter(x -> !x.isEmpty()).toList();
        LatencyMatrix m = matrix(c);
        if (m == null) throw new Config.ConfigException("sites: not set, and there is no latency matrix to take them from");
        return m.sites();
    }

    /**
     * The {@code sequencer} setting, else the first site of the {@code sites} setting: not of the group's current set
     * (after the first site's removal that lacks it, and a restarted site would name another leader than the running ones).
     */
    public static String sequencer(Config c) {
        String s = c.get("sequencer");
        return s == null || s.isBlank() ? sites(c).get(0) : s;
    }

    static LatencyMatrix matrix(Config c) {
        String m = c.get("latency_matrix");
        return m == null || m.equals("none") ? null : LatencyMatrix.load(m);
    }

    public static Delivery delivery(Config c) {
        return switch (c.get("delivery")) {
            case "agreed" -> Delivery.AGREED;
            case "safe" -> Delivery.SAFE;
            default -> Delivery.OPT_SAFE;
        };
    }

    /** Starts site {@code name}: joins the group, waits to be in a primary view, then opens the proxy port. */
    public static Site start(Config cluster, String name, Duration joinTimeout) throws Exception {
        return start(cluster, name, joinTimeout, java.util.function.UnaryOperator.identity());
    }

    /**
     * As {@link #start(Config, String, Duration)}; {@code listenerWrapper} may interpose on the
     * deliveries (tests use it to force optimistic orders that differ from the final order).
     */
    public static Site start(Config cluster, String name, Duration joinTimeout,
                             java.util.function.UnaryOperator<org.wanrep.gcs.GcsListener> listenerWrapper) throws Exception {
        Config c = cluster.forSite(name);
        List<String> sites = sites(cluster);
        // the set the total order last gave this site wins over the files (cluster add-site/remove-site rewrite those too)
        Membership.Recorded recorded = Membership.read(Membership.fileIn(c.get("rejoin.log_dir"), name));
        if (recorded != null) {
            if (!new java.util.HashSet<>(recorded.sites()).equals(new java.util.HashSet<>(sites)))
                LOG.warn("site {}: the configuration names sites {}, the group set {} at GSN {}: using the group's", name, sites,
                        recorded.sites(), recorded.gsn());
            sites = recorded.sites();
        }
        if (!sites.contains(name)) throw new Config.ConfigException("site '" + name + "' is not one of " + sites
                + (recorded != null ? " (it was removed from the cluster at GSN " + recorded.gsn() + ")" : ""));
        // a missing, unreadable or too open secret stops the site before it holds anything
        if (!c.get("gcs.secret_file").isEmpty()) org.wanrep.gcs.jgroups.GcsSecret.load(java.nio.file.Path.of(c.get("gcs.secret_file")));
        else LOG.warn("gcs.secret_file is not set: traffic between sites is in clear text and any process that reaches {}:{} can join the group",
                c.get("gcs.host"), c.get("gcs.port"));
        // the proxy's port first: nothing else can take it while the site joins (clients wait until it accepts)
        java.net.ServerSocket listening = ProxyServer.bind(c.get("proxy.host"), c.getInt("proxy.port"));
        try {
            return start(cluster, name, joinTimeout, listenerWrapper, sites, c, listening);
        } catch (Exception | Error e) {
            closeQuietly(listening);
            throw e;
        }
    }

    private static Site start(Config cluster, String name, Duration joinTimeout, java.util.function.UnaryOperator<org.wanrep.gcs.GcsListener> listenerWrapper,
                              List<String> sites, Config c, java.net.ServerSocket listening) throws Exception {
        org.wanrep.tls.TlsContext tls = proxyTls(c);   // before joining: a bad certificate is a configuration error
        BackendTarget target = new BackendTarget(c.get("postgres.host"), c.getInt("postgres.port"), c.get("postgres.user"), c.get("postgres.password"),
                c.get("postgres.socket_dir"), c.get("postgres.sslmode"), c.get("postgres.sslrootcert"));
        if (!target.sslmode().equals("disable")) org.wanrep.backend.BackendConnection.tls(target);   // a bad root certificate: refused at start
        // died while a state transfer replaced its databases: before anything connects (postgres may be missing)
        boolean halfRestored = StateTransfer.unfinished(c.get("rejoin.log_dir"), name, target);
        ExecutionPolicy policy;
        try {
            policy = new ExecutionPolicy(ExecutionPolicy.kind(c.get("execution")), sites, primaries(cluster));
        } catch (IllegalArgumentException e) {
            throw new Config.ConfigException(e.getMessage());
        }
        SessionLimit sessions = new SessionLimit(clientLimit(c, target, policy.kind() != ExecutionPolicy.Kind.SYMMETRIC
                || c.get("blocks").equals("certify") && c.get("blocks.write_sets").equals("on")));
        // before anything reads what the replica has: no session an earlier incarnation left may still commit in it
        try {
            List<Integer> fenced = ReplicaFence.endOtherSessions(target, Duration.ofSeconds(10));
            if (!fenced.isEmpty())
                LOG.warn("site {}: ended {} session(s) found in its replica at start (an earlier incarnation's could still commit): {}",
                        name, fenced.size(), fenced);
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException("site " + name + ": cannot end the sessions in its replica before reading what it has: " + e.getMessage(), e);
        }
        BackendPool pool = new BackendPool(target, c.getInt("pool.size"), Duration.ofMillis(c.getInt("pool.wait_timeout_ms")));
        // requests that other sites' clients sent run here logged in as their roles, with the passwords configured for them
        UserDirectory roleUsers = UserDirectory.parse(c.get("users"));
        pool.roles(role -> target.as(role, org.wanrep.auth.UserDirectory.replicaPassword(roleUsers.find(role))));
        try {
            pool.fill(SERVICE_DATABASE);   // held from the start, whatever else connects to the replica
        } catch (java.io.IOException e) {
            // the client limit alone still leaves them free: opened on demand then
            LOG.warn("could not open the replication pool's connections at start: {}", e.getMessage());
        }
        // prepared transactions a certified block left here when this site stopped: under symmetric execution their outcome
        // comes from the total order when the site replays it (committed where they certified), never guessed
        List<org.wanrep.txn.ReplicationEngine.LeftPrepared> leftover = wanrepPrepared(pool);
        if (policy.kind() != ExecutionPolicy.Kind.SYMMETRIC && !leftover.isEmpty()) {
            // under write-set policies a site back in the group always takes a copy, which has their outcome (the
            // others applied the write set, or the policy's executor replayed the block's log), and the capture's slots
            // cannot be made while a prepared transaction is open: they are rolled back now (a whole cluster starting
            // afresh takes each replica as it is, as write-set policies always do)
            for (org.wanrep.txn.ReplicationEngine.LeftPrepared p : leftover) {
                resolvePrepared(pool, p.database(), p.gid(), false);
                LOG.warn("site {}: prepared transaction {} of a certified block rolled back before the write-set capture starts;"
                        + " the state transfer that follows brings its outcome", name, p.gid());
            }
            leftover = List.of();
        }
        WireTxnExecutor executor = new WireTxnExecutor(pool);
        WriteSetChannel channel = null;
        boolean certify = c.get("blocks").equals("certify");
        if (policy.kind() != ExecutionPolicy.Kind.SYMMETRIC) {
            // certified blocks' write sets are captured at PREPARE too, and travel in their CERTIFY
            channel = new WriteSetChannel(name, target, c.getInt("writeset.appliers"), true, certify);
            channel.startAll();   // before this site executes anything for the others
            executor.onCapturedDatabase(channel::capture);
        } else if (certify && c.get("blocks.write_sets").equals("on")) {
            // symmetric execution: a certified block's write set, captured at its origin's PREPARE, is applied here; the
            // captures start in the background (a slot waits for open transactions: prepared ones left by the last
            // incarnation end only once the total order resolves them), and until then blocks ship their statement log
            channel = new WriteSetChannel(name, target, c.getInt("writeset.appliers"), false, true);
            channel.startPreparedInBackground(channel.databases());
        }
        ReplicationEngine engine = new ReplicationEngine(name, delivery(c), executor, policy, channel != null ? channel : WriteSetIo.NONE);
        engine.replicaConnections(c.getInt("pool.size"));   // commits in order: one connection is always left for the next to commit
        // request numbers of an earlier incarnation of this site may still be known to the others
        engine.startIdsAt(System.currentTimeMillis() * 1000);
        // write-set policies record no position: a restart under agreed delivery must still know its replica took part in a history
        if (policy.kind() != ExecutionPolicy.Kind.SYMMETRIC) engine.markHistoryWith(org.wanrep.exec.ReplicaPosition.historyMarker(target));
        if (policy.kind() == ExecutionPolicy.Kind.SYMMETRIC) {
            // what this replica has (it may have crashed): every transaction records its GSN, so a site that
            // rejoins behind the others catches up from their logs instead of stopping (write-set policies:
            // the record would travel in the write set; not yet)
            org.wanrep.exec.ReplicaPosition.Recovered pos = org.wanrep.exec.ReplicaPosition.prepare(target);
            if (halfRestored) pos = org.wanrep.exec.ReplicaPosition.Recovered.EMPTY;   // what it records is not what it has
            // what certified blocks of the last incarnation left: committed ones (marked in the replica) are not replayed, and
            // prepared ones (holding their rows) are committed or rolled back as their CERTIFY delivery decides, never by guess
            engine.recoverCertified(pos.certified().stream().map(org.wanrep.txn.RequestId::parse).toList(), leftover,
                    (db, gid, commit) -> resolvePrepared(pool, db, gid, commit));
            if (pos.doneUpTo() > 0 || !pos.above().isEmpty())
                LOG.info("site {}: its replica has every GSN up to {}{}", name, pos.doneUpTo(), pos.above().isEmpty() ? "" : " and " + pos.above().size() + " above");
            engine.recover(pos.doneUpTo(), pos.above(), () -> {
                try {
                    org.wanrep.exec.ReplicaPosition.reset(target);
                } catch (java.sql.SQLException e) {
                    throw new IllegalStateException("cannot reset the replica's recorded positions: " + e.getMessage(), e);
                }
            });
            engine.catchUpFrom(new LogFetcher(cluster, name));
            executor.recordPositionsIn(target);
            engine.stateTransferFrom(new StateTransfer(cluster, name, target, pool, channel));
            engine.chooseCatchUpBy(new org.wanrep.txn.CatchUpChoice(c.getDouble("rejoin.replay_per_second"), c.getDouble("rejoin.transfer_mb_per_second")));
            // a new site, or one whose replica is half a copy: a state transfer at once, not the logs from GSN 1
            engine.newSite(c.get("gcs.bootstrap").equals("off") || halfRestored);
        } else {
            // write-set policies: a site that re-enters the primary component with any history takes a state transfer
            // (the log is never replayed: a replayed write set's executor depends on views this site did not see)
            engine.stateTransferFrom(new StateTransfer(cluster, name, target, pool, channel));
            engine.newSite(c.get("gcs.bootstrap").equals("off") || halfRestored);
            engine.snapshotsForJoiners(b -> org.wanrep.exec.SnapshotExport.prepareForJoiners(engine, target, b));
            // certified blocks: after its copy, the certifier still learns the deliveries before it from the others' logs
            engine.primeCertifierFrom(new LogFetcher(cluster, name));
        }
        String logDir = c.get("rejoin.log_dir");
        int logMb = c.getInt("rejoin.log_max_mb");
        if (logMb < 1) throw new Config.ConfigException("rejoin.log_max_mb: " + logMb + " is not at least 1");
        long logBytes = (long) logMb << 20;
        engine.keepLog(logDir == null || logDir.isBlank() ? org.wanrep.txn.OrderedLog.temporary(c.getInt("rejoin.log_window"), logBytes)
                : org.wanrep.txn.OrderedLog.open(java.nio.file.Path.of(logDir).resolve(name + ".orderlog"), c.getInt("rejoin.log_window"), logBytes));
        LatencyMatrix matrix = matrix(c);
        List<String> hosts = new ArrayList<>();
        for (String s : sites(cluster)) {   // discovery: every site whose address the configuration gives
            Config sc = cluster.forSite(s);
            hosts.add(sc.get("gcs.host") + "[" + sc.getInt("gcs.port") + "]");
        }
        String incarnation = Long.toString(System.currentTimeMillis());
        GcsSettings gs = new GcsSettings(c.get("cluster.name"), name, incarnation, sites, sequencer(c), c.get("gcs.host"),
                c.getInt("gcs.port"), hosts, matrix, c.getDouble("gcs.jitter_ms"), c.getInt("gcs.ack_interval_ms"), c.get("gcs.bootstrap").equals("on"))
                .withSecretFile(c.get("gcs.secret_file").isEmpty() ? null : java.nio.file.Path.of(c.get("gcs.secret_file")));
        int backlogMb = c.getInt("flow.max_backlog_mb");
        if (backlogMb < 0) throw new Config.ConfigException("flow.max_backlog_mb: " + backlogMb + " is negative");
        FlowControl flow = new FlowControl(name, c.getInt("flow.max_backlog"), (long) backlogMb << 20, c.getInt("flow.wait_timeout_ms"),
                c.getInt("flow.report_interval_ms"));
        org.wanrep.txn.OutcomeAudit audit = new org.wanrep.txn.OutcomeAudit(name, c.getInt("audit.report_interval_ms"));
        engine.auditOutcomes(audit);
        audit.onDivergence(engine::fail);
        Membership membership = new Membership(name, Membership.fileIn(logDir, name), listenerWrapper.apply(flow.intercept(audit.intercept(engine))));
        membership.onChanged(engine::sitesChanged);   // write-set executors follow the configured sites, switched at the change's GSN
        JGroupsGcs gcs = JGroupsGcs.start(gs, membership);
        // with opt-safe too: a tentative attempt revoked in favour of a certified block, which could wait in PostgreSQL
        // on the block's prepared locks while the block waits for its rollback, is cancelled for sure (the executor's
        // cancel is sticky and repeated until the attempt returns; CertifiedBlocksOptSafeTest)
        engine.certification(c.get("blocks").equals("certify"), c.getInt("blocks.certification_window"));
        engine.replayInTurn(c.get("blocks.replay").equals("in-turn"));
        engine.attach(gcs);
        gcs.onFatal(engine::fail);   // a delivery the engine failed on stops the site (fires at once if one failed already)
        engine.flowControl(flow);
        flow.start(gcs, gcs.self(), engine::pending, engine::pendingBytes, engine::lagBehind, engine::finishedThrough);
        audit.start(gcs, gcs.self(), engine::finishedThrough);
        if (channel != null) channel.attach(gcs);
        try {
            gcs.awaitPrimary(sites.size() / 2 + 1, joinTimeout);
        } catch (Exception e) {
            flow.stop();
            audit.stop();
            gcs.crash();
            if (engine.orderedLog() != null) engine.orderedLog().close();
            if (channel != null) channel.close(false);
            executor.close();
            pool.close();
            closeQuietly(listening);
            throw e;
        }
        // the engine hears of the view on the delivery thread, after the member: wait for it, so that a
        // member back without the others' transactions is refused before the port opens
        long until = System.nanoTime() + joinTimeout.toNanos();
        while (engine.failure() == null && (engine.view() == null || !engine.view().primary()) && System.nanoTime() < until) Thread.sleep(5);
        // and for the read lease: clients are served only by a site sure that its replica is current
        // (a site catching up opens its port now: it answers 57P03 until it has caught up, and SHOW wanrep.sites says how far)
        while (engine.failure() == null && !engine.current() && !engine.catchingUp() && System.nanoTime() < until) Thread.sleep(5);
        if (engine.failure() != null) {
            // e.g. it re-entered the primary component lacking transactions the others committed, or a delivery
            // failed: its replica is stale, so it must not open its port at all (no state transfer yet)
            engine.shutdown("site failed while starting");
            flow.stop();
            audit.stop();
            gcs.crash();
            if (engine.orderedLog() != null) engine.orderedLog().close();
            if (channel != null) channel.close(false);
            executor.close();
            pool.close();
            closeQuietly(listening);
            throw new SiteStoppedException("site " + name + " cannot start: " + engine.failure());
        }
        SiteContext ctx = new SiteContext(name, target, UserDirectory.parse(c.get("users")), engine,
                new org.wanrep.sql.Classifiers(target, org.wanrep.sql.Classifiers.configuredFunctions(c), policy.kind() != ExecutionPolicy.Kind.SYMMETRIC),
                new CancelRegistry(), c.get("queries").equals("locked"), Duration.ofMillis(c.getInt("pool.wait_timeout_ms")),
                policy.kind() != ExecutionPolicy.Kind.SYMMETRIC ? channel : null, sessions, c.get("testing.fault_injection").equals("on"),
                clientLimits(c, sessions.max()), channel);
        // DDL run here for another site's client changes the catalog the classifiers know (called under the
        // engine's monitor for every commit: the origin's analysis travels with the request, nothing is parsed)
        engine.onCommit(r -> {
            if (r.changesCatalog()) {
                ctx.classifiers().catalogChanged(r.database());
                org.wanrep.exec.ReplicaPosition.catalogChanged();   // e.g. a database created from template0
            }
        });
        // a state transfer replaced every database: the tables, keys and functions the classifiers read are stale
        // (an origin's stale lock set would travel with its request to every site)
        engine.onStateTransferred(() -> {
            executor.replicaReplaced();
            ctx.classifiers().catalogChangedEverywhere();
            org.wanrep.exec.ReplicaPosition.catalogChanged();
        });
        boolean clientRoles = c.get("proxy.session_role").equals("client");
        ProxyServer proxy = new ProxyServer(ctx, listening, new org.wanrep.frontend.SessionSecurity(tls, c.get("proxy.tls.require").equals("on"), clientRoles,
                c.get("proxy.tls.clientcert").equals("verify-full")));
        LOG.info("site {} ready: proxy on {}:{}, replica {}, {} delivery, {} execution", name, c.get("proxy.host"), proxy.port(), target,
                c.get("delivery"), c.get("execution"));
        Site site = new Site(name, pool, executor, engine, gcs, proxy, channel);
        // a replica that can no longer follow the others (a write set committed here that cannot be
        // shipped or one that cannot be applied) stops: the others go on without it, consistently
        java.util.function.Consumer<String> fatal = reason -> Thread.ofPlatform().name("wanrep-fatal-" + name).start(() -> {
            LOG.error("site {} stops: {}", name, reason);
            site.stopReason.compareAndSet(null, reason);
            site.crash();
        });
        // every fatal report goes through the engine first: it stops processing deliveries at once
        engine.onFatal(fatal);
        proxy.onFatal(engine::fail);
        executor.onFatal(engine::fail);
        if (channel != null) channel.onFatal(engine::fail);
        // removed from the cluster: leave the group cleanly once the removal is delivered (its GSN is done here)
        membership.onRemoved(reason -> Thread.ofPlatform().name("wanrep-removed-" + name).start(() -> {
            LOG.warn("site {} stops: {}", name, reason);
            site.removed = true;
            site.stopReason.compareAndSet(null, reason);
            site.close();
        }));
        return site;
    }

    /** The database the proxy's own connections use when they need one (every cluster has it). */
    static final String SERVICE_DATABASE = "postgres";

    /** The prepared transactions wanrep's certified blocks left in the replica (any database). */
    static List<org.wanrep.txn.ReplicationEngine.LeftPrepared> wanrepPrepared(BackendPool pool) throws java.io.IOException {
        List<org.wanrep.txn.ReplicationEngine.LeftPrepared> left = new ArrayList<>();
        org.wanrep.backend.BackendConnection conn = pool.borrow(SERVICE_DATABASE);
        try {
            conn.send(org.wanrep.wire.WireMessage.query("SELECT gid, database FROM pg_catalog.pg_prepared_xacts WHERE gid LIKE 'wanrep:%' ORDER BY gid"));
            conn.flush();
            while (!conn.tracker().idle()) {
                org.wanrep.wire.WireMessage m = conn.read();
                if (m.kind() == 'D') {
                    List<String> row = org.wanrep.wire.Messages.dataRowValues(m);
                    left.add(leftPrepared(row.get(0), row.get(1)));
                }
                if (m.kind() == 'E') throw new java.io.IOException("reading pg_prepared_xacts: " + org.wanrep.wire.PgError.parse(m));
            }
        } finally {
            pool.release(conn);
        }
        return left;
    }

    /** A prepared transaction's name ({@code InteractiveBlock.preparedName}: wanrep:REQUEST@MEMBER) read back. */
    static org.wanrep.txn.ReplicationEngine.LeftPrepared leftPrepared(String gid, String database) {
        int at = gid.indexOf('@');
        if (!gid.startsWith("wanrep:") || at < 0) throw new IllegalStateException("not a certified block's prepared transaction: " + gid);
        return new org.wanrep.txn.ReplicationEngine.LeftPrepared(org.wanrep.txn.RequestId.parse(gid.substring("wanrep:".length(), at)), gid, database,
                gid.substring(at + 1));
    }

    /** COMMIT or ROLLBACK PREPARED on a connection to the prepared transaction's database. */
    static void resolvePrepared(BackendPool pool, String database, String gid, boolean commit) throws java.io.IOException {
        org.wanrep.backend.BackendConnection conn = pool.borrow(database);
        try {
            org.wanrep.wire.PgError e = conn.run((commit ? "COMMIT" : "ROLLBACK") + " PREPARED '" + gid.replace("'", "''") + "'");
            if (e != null) throw new java.io.IOException(e.toString());
        } finally {
            pool.release(conn);
        }
    }

    /** Replica connections besides the pool, capture and appliers: catalog reads, administrators, checks. */
    static final int CONNECTION_MARGIN = 5;

    /**
     * How many client sessions this site serves at once: {@code proxy.max_clients}, else what the
     * replica's max_connections leaves once replication's connections are set aside (issue 10: with
     * clients holding every connection, other sites' updates could not be applied and the replica
     * stood still).
     */
    static int clientLimit(Config c, BackendTarget target, boolean writeSets) throws java.io.IOException {
        String explicit = c.get("proxy.max_clients");
        if (explicit != null && !explicit.isBlank()) return c.getInt("proxy.max_clients");
        int replication = c.getInt("pool.size") + (writeSets ? c.getInt("writeset.appliers") + 1 : 0);
        int maxConnections, reserved;
        try (org.wanrep.backend.BackendConnection b = org.wanrep.backend.BackendConnection.open(target, SERVICE_DATABASE,
                java.util.Map.of("application_name", "wanrep"))) {
            b.send(org.wanrep.wire.WireMessage.query("SELECT pg_catalog.current_setting('max_connections'), pg_catalog.current_setting('superuser_reserved_connections')"));
            b.flush();
            List<String> row = null;
            org.wanrep.wire.PgError error = null;
            while (true) {
                org.wanrep.wire.WireMessage m = b.read();
                if (m.kind() == 'D') row = org.wanrep.wire.Messages.dataRowValues(m);
                if (m.kind() == 'E') error = org.wanrep.wire.PgError.parse(m);
                if (m.kind() == 'Z') break;
            }
            if (row == null) throw new java.io.IOException("cannot read max_connections from the replica: " + error);
            maxConnections = Integer.parseInt(row.get(0));
            reserved = Integer.parseInt(row.get(1));
        }
        int limit = SessionLimit.derived(maxConnections, reserved, replication, CONNECTION_MARGIN);
        if (limit < 1)
            throw new Config.ConfigException("the replica's max_connections (" + maxConnections + ") leaves no connection for clients once "
                    + reserved + " superuser-reserved, " + replication + " for replication (pool.size, write-set appliers and capture) and "
                    + CONNECTION_MARGIN + " spare are set aside: raise max_connections or lower pool.size");
        LOG.info("serving at most {} client sessions (replica max_connections {}, {} reserved for superusers, {} for replication, {} spare)",
                limit, maxConnections, reserved, replication, CONNECTION_MARGIN);
        return limit;
    }

    /** What clients may cost this site (see {@link ClientLimits}); connections in their startup: twice the sessions, at least 64. */
    static ClientLimits clientLimits(Config c, int maxClients) {
        int maxMessageMb = c.getInt("proxy.max_message_mb");
        if (maxMessageMb < 1 || maxMessageMb > 1023)
            throw new Config.ConfigException("proxy.max_message_mb: " + maxMessageMb + " is not between 1 and 1023");
        String b = c.get("proxy.buffer_budget_mb");
        long budget = b == null || b.isBlank() ? Runtime.getRuntime().maxMemory() / 4 : (long) c.getInt("proxy.buffer_budget_mb") << 20;
        return new ClientLimits(maxMessageMb << 20, budget, c.getInt("proxy.authentication_timeout_ms"), c.getInt("proxy.idle_session_timeout_ms"),
                c.getInt("proxy.max_clients_per_user"), Math.max(64, 2 * maxClients));
    }

    private static void closeQuietly(java.net.ServerSocket s) {
        try {
            s.close();
        } catch (java.io.IOException ignored) {
            // closing
        }
    }

    /** Configured primary sites: {@code tables.TABLE.primary} or {@code tables.SCHEMA.TABLE.primary}. */
    static java.util.Map<String, String> primaries(Config c) {
        java.util.Map<String, String> m = new java.util.HashMap<>();
        for (var e : c.explicit().entrySet()) {
            java.util.regex.Matcher k = java.util.regex.Pattern.compile("tables\\.(.+)\\.primary").matcher(e.getKey());
            if (!k.matches()) continue;
            String t = k.group(1).toLowerCase(java.util.Locale.ROOT);
            m.put(t.contains(".") ? t : "public." + t, e.getValue().trim());
        }
        return m;
    }

    /**
     * Starts every site of {@code sites} in this process at once (each waits for a majority, so they
     * cannot start one after another); on failure the ones that started are stopped again.
     */
    public static List<Site> startAll(Config cluster, List<String> sites, Duration joinTimeout) throws Exception {
        Site[] started = new Site[sites.size()];
        Exception[] failed = new Exception[1];
        List<Thread> ts = new ArrayList<>();
        for (int i = 0; i < sites.size(); i++) {
            int k = i;
            ts.add(Thread.ofPlatform().start(() -> {
                try {
                    started[k] = Site.start(cluster, sites.get(k), joinTimeout);
                } catch (Exception e) {
                    synchronized (failed) { if (failed[0] == null) failed[0] = e; }
                }
            }));
        }
        for (Thread t : ts) t.join();
        List<Site> out = new ArrayList<>();
        for (Site x : started) if (x != null) out.add(x);
        if (failed[0] != null) {
            for (Site x : out) x.close();
            throw failed[0];
        }
        return out;
    }

    public String name() { return name; }
    public int proxyPort() { return proxy.port(); }
    public ReplicationEngine engine() { return engine; }
    public ProxyServer proxy() { return proxy; }
    public JGroupsGcs gcs() { return gcs; }
    /** Whether it stopped because the cluster removed it (a clean end, not a failure). */
    public boolean removed() { return removed; }

    /** Stops like a crash: the group sees the member vanish, clients lose their connections. */
    public void crash() {
        if (!stopped.compareAndSet(false, true)) return;
        try {
            proxy.close();
            engine.flowControl().stop();
            engine.outcomeAudit().stop();
            engine.shutdown("site crashed");
            gcs.crash();
            if (engine.orderedLog() != null) engine.orderedLog().close();
            if (channel != null) channel.close(false);
            executor.close();
            pool.close();
        } finally {
            down.countDown();
        }
    }

    /** Waits until the site stopped (closed, crashed, or stopped by itself); returns why it stopped by itself, or null. */
    public String awaitStopped() throws InterruptedException {
        down.await();
        return stopReason.get();
    }

    /** Called on every site before a whole cluster stops: the last ones then lose the majority without a warning. */
    public void clusterStopping() { engine.clusterStopping(); }

    /** Stops cleanly: leaves the group; under a write-set policy also drops this site's slots and origins. */
    @Override public void close() {
        if (!stopped.compareAndSet(false, true)) return;
        try {
            proxy.close();
            engine.flowControl().stop();
            engine.outcomeAudit().stop();
            engine.shutdown("site stopped");
            gcs.close();
            if (engine.orderedLog() != null) engine.orderedLog().close();
            if (channel != null) channel.close(true);
            executor.close();
            pool.close();
        } finally {
            down.countDown();
        }
    }

    /** The proxy's TLS from proxy.tls.*: null when no certificate is configured. */
    static org.wanrep.tls.TlsContext proxyTls(Config c) throws Config.ConfigException {
        String cert = c.get("proxy.tls.cert"), key = c.get("proxy.tls.key"), ca = c.get("proxy.tls.ca");
        if (cert.isEmpty()) {
            if (!key.isEmpty() || !ca.isEmpty() || c.get("proxy.tls.require").equals("on") || c.get("proxy.tls.clientcert").equals("verify-full"))
                throw new Config.ConfigException("proxy.tls.key, proxy.tls.ca, proxy.tls.clientcert and proxy.tls.require need a certificate in proxy.tls.cert");
            return null;
        }
        if (key.isEmpty()) throw new Config.ConfigException("proxy.tls.cert needs its private key in proxy.tls.key");
        if (ca.isEmpty() && c.get("proxy.tls.clientcert").equals("verify-full"))
            throw new Config.ConfigException("proxy.tls.clientcert verify-full needs the CA of client certificates in proxy.tls.ca");
        try {
            return org.wanrep.tls.TlsContext.server(java.nio.file.Path.of(cert), java.nio.file.Path.of(key), ca.isEmpty() ? null : java.nio.file.Path.of(ca));
        } catch (java.io.IOException | java.security.GeneralSecurityException e) {
            throw new Config.ConfigException("proxy TLS: " + e);
        }
    }
}
