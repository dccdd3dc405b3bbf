package org.wanrep.site;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.wanrep.auth.UserDirectory;
import org.wanrep.backend.BackendPool;
import org.wanrep.backend.BackendTarget;
import org.wanrep.config.Config;
import org.wanrep.exec.WireTxnExecutor;
import org.wanrep.frontend.CancelRegistry;
import org.wanrep.frontend.ProxyServer;
import org.wanrep.frontend.SiteContext;
import org.wanrep.gcs.Delivery;
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
        List<String> sites = sites(cluster);
        if (!sites.contains(name)) throw new Config.ConfigException("site '" + name + "' is not one of " + sites);
        Config c = cluster.forSite(name);
        BackendTarget target = new BackendTarget(c.get("postgres.host"), c.getInt("postgres.port"), c.get("postgres.user"), c.get("postgres.password"),
                c.get("postgres.socket_dir"));
        ExecutionPolicy policy;
        try {
            policy = new ExecutionPolicy(ExecutionPolicy.kind(c.get("execution")), sites, primaries(cluster));
        } catch (IllegalArgumentException e) {
            throw new Config.ConfigException(e.getMessage());
        }
        BackendPool pool = new BackendPool(target, c.getInt("pool.size"), Duration.ofMillis(c.getInt("pool.wait_timeout_ms")));
        WireTxnExecutor executor = new WireTxnExecutor(pool);
        WriteSetChannel channel = null;
        if (policy.kind() != ExecutionPolicy.Kind.SYMMETRIC) {
            channel = new WriteSetChannel(name, target, c.getInt("writeset.appliers"));
            channel.startAll();   // before this site executes anything for the others
            executor.onCapturedDatabase(channel::capture);
        }
        ReplicationEngine engine = new ReplicationEngine(name, delivery(c), executor, policy, channel != null ? channel : WriteSetIo.NONE);
        LatencyMatrix matrix = matrix(c);
        List<String> hosts = new ArrayList<>();
        for (String s : sites) {
            Config sc = cluster.forSite(s);
            hosts.add(sc.get("gcs.host") + "[" + sc.getInt("gcs.port") + "]");
        }
        String incarnation = Long.toString(System.currentTimeMillis());
        GcsSettings gs = new GcsSettings(c.get("cluster.name"), name, incarnation, sites, c.get("sequencer"), c.get("gcs.host"),
                c.getInt("gcs.port"), hosts, matrix, c.getDouble("gcs.jitter_ms"), c.getInt("gcs.ack_interval_ms"), true);
        JGroupsGcs gcs = JGroupsGcs.start(gs, listenerWrapper.apply(engine));
        engine.attach(gcs);
        if (channel != null) channel.attach(gcs);
        gcs.awaitPrimary(sites.size() / 2 + 1, joinTimeout);
        String failed = gcs.failure();
        if (failed != null) {   // the engine failed on a delivery before the fatal handler below exists: never serve
            engine.shutdown("site failed while starting");
            gcs.crash();
            if (channel != null) channel.close(false);
            executor.close();
            pool.close();
            throw new IllegalStateException("site " + name + " cannot start: " + failed);
        }
        SiteContext ctx = new SiteContext(name, target, UserDirectory.parse(c.get("users")), engine,
                new org.wanrep.sql.Classifiers(target, org.wanrep.sql.Classifiers.configuredFunctions(c), policy.kind() != ExecutionPolicy.Kind.SYMMETRIC),
                new CancelRegistry(), c.get("queries").equals("locked"), Duration.ofMillis(c.getInt("pool.wait_timeout_ms")), channel);
        // DDL run here for another site's client changes the catalog the classifiers know (called under the
        // engine's monitor for every commit: the origin's analysis travels with the request, nothing is parsed)
        engine.onCommit(r -> {
            if (r.changesCatalog()) ctx.classifiers().catalogChanged(r.database());
        });
        ProxyServer proxy = new ProxyServer(ctx, c.get("proxy.host"), c.getInt("proxy.port"));
        LOG.info("site {} ready: proxy on {}:{}, replica {}, {} delivery, {} execution", name, c.get("proxy.host"), proxy.port(), target,
                c.get("delivery"), c.get("execution"));
        Site site = new Site(name, pool, executor, engine, gcs, proxy, channel);
        // a replica that can no longer follow the others (a write set committed here that cannot be
        // shipped or one that cannot be applied) stops: the others go on without it, consistently
        java.util.function.Consumer<String> fatal = reason -> Thread.ofPlatform().name("wanrep-fatal-" + name).start(() -> {
            LOG.error("site {} stops: {}", name, reason);
            site.crash();
        });
        engine.onFatal(fatal);
        executor.onFatal(fatal);
        if (channel != null) channel.onFatal(fatal);
        gcs.onFatal(fatal);   // fires at once if a delivery failed since the check above
        return site;
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
    public JGroupsGcs gcs() { return gcs; }

    /** Stops like a crash: the group sees the member vanish, clients lose their connections. */
    public void crash() {
        if (!stopped.compareAndSet(false, true)) return;
        proxy.close();
        engine.shutdown("site crashed");
        gcs.crash();
        if (channel != null) channel.close(false);
        executor.close();
        pool.close();
    }

    /** Stops cleanly: leaves the group; under a write-set policy also drops this site's slots and origins. */
    @Override public void close() {
        if (!stopped.compareAndSet(false, true)) return;
        proxy.close();
        engine.shutdown("site stopped");
        gcs.close();
        if (channel != null) channel.close(true);
        executor.close();
        pool.close();
    }
}
