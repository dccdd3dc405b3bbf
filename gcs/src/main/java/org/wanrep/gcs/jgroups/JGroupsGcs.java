package org.wanrep.gcs.jgroups;

import org.jgroups.Address;
import org.jgroups.BytesMessage;
import org.jgroups.JChannel;
import org.jgroups.Message;
import org.jgroups.Receiver;
import org.jgroups.View;
import org.jgroups.util.NameCache;
import org.jgroups.util.Util;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.wanrep.gcs.Delivery;
import org.wanrep.gcs.Gcs;
import org.wanrep.gcs.GcsListener;
import org.wanrep.gcs.GcsMessage;
import org.wanrep.gcs.GcsView;
import org.wanrep.gcs.Members;
import org.wanrep.gcs.MsgId;
import org.wanrep.gcs.core.Codec;
import org.wanrep.gcs.core.CoreConfig;
import org.wanrep.gcs.core.Effects;
import org.wanrep.gcs.core.Proto;
import org.wanrep.gcs.core.TotalOrderCore;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * The thin adapter between JGroups and {@link TotalOrderCore}: the core runs under one lock, fed by
 * JGroups' receive threads, view changes and a 1 ms timer; what it sends goes out on a sender thread
 * (so flow control never blocks the protocol), and what it delivers reaches the listener on one
 * delivery thread, in order.
 */
public final class JGroupsGcs implements Gcs, Receiver {
    private static final Logger LOG = LoggerFactory.getLogger(JGroupsGcs.class);

    private final GcsSettings settings;
    private final String self;
    private final JChannel channel;
    private final TotalOrderCore core;
    private final GcsListener listener;
    private final ReentrantLock lock = new ReentrantLock();
    private final LinkedBlockingQueue<Runnable> outbound = new LinkedBlockingQueue<>();
    private final LinkedBlockingQueue<Runnable> deliveries = new LinkedBlockingQueue<>();
    private final Thread sender, deliverer, ticker;
    private volatile Map<String, Address> addresses = Map.of();
    private volatile GcsView view;
    private volatile boolean closed;
    /** {@link TotalOrderCore#leaseExpiry()} as of the core's last step: read without the lock on every client request. */
    private volatile long leaseUntil = Long.MIN_VALUE;
    /** Why delivery stopped (the listener failed), or null; guarded by this. */
    private String failure;
    /** Told once why this member cannot go on; guarded by this. */
    private Consumer<String> fatalHandler;
    private boolean fatalReported;

    private JGroupsGcs(GcsSettings s, GcsListener listener, Consumer<JChannel> customize) throws Exception {
        this.settings = s;
        this.listener = listener;
        this.self = Members.name(s.site(), s.incarnation());
        CoreConfig cfg = new CoreConfig(s.sites(), s.sequencerSite(), s.ackIntervalMs(), 500, s.mayBootstrap());
        this.core = new TotalOrderCore(self, cfg, new ChannelEffects());
        javax.crypto.SecretKey key = s.secretFile() == null ? null : GcsSecret.load(s.secretFile());   // before the channel exists
        this.channel = new JChannel(new ByteArrayInputStream(StackXml.build(s).getBytes(StandardCharsets.UTF_8)));
        channel.name(self);
        ((WAN_DELAY) channel.getProtocolStack().findProtocol(WAN_DELAY.class)).configure(s.matrix(), s.site(), s.jitterMs());
        if (key != null) GcsSecret.install(channel, key);
        if (customize != null) customize.accept(channel);
        channel.setReceiver(this);
        sender = Thread.ofPlatform().daemon().name("gcs-send-" + self).start(() -> loop(outbound));
        deliverer = Thread.ofPlatform().daemon().name("gcs-deliver-" + self).start(this::deliveryLoop);
        ticker = Thread.ofPlatform().daemon().name("gcs-tick-" + self).start(this::tickLoop);
    }

    /** Creates the member and connects it; views and deliveries follow asynchronously. */
    public static JGroupsGcs start(GcsSettings s, GcsListener listener) throws Exception {
        return start(s, listener, null);
    }

    /** As {@link #start(GcsSettings, GcsListener)}, letting a test change the stack (e.g. insert DISCARD) before connecting. */
    public static JGroupsGcs start(GcsSettings s, GcsListener listener, Consumer<JChannel> customize) throws Exception {
        JGroupsGcs g = new JGroupsGcs(s, listener, customize);
        g.channel.connect(s.cluster());
        return g;
    }

    private static long now() { return System.nanoTime() / 1_000_000; }

    private void loop(LinkedBlockingQueue<Runnable> q) {
        while (!closed) {
            try {
                Runnable r = q.poll(100, TimeUnit.MILLISECONDS);
                if (r != null) r.run();
            } catch (InterruptedException e) {
                return;
            } catch (Throwable t) {
                LOG.error("{}: {}", self, t.toString(), t);
            }
        }
    }

    /**
     * Delivers in order until the listener fails. A delivery the listener failed on cannot be skipped
     * (the other sites applied it): this member stops delivering and reports to the fatal handler.
     */
    private void deliveryLoop() {
        while (!closed) {
            Runnable r;
            try {
                r = deliveries.poll(100, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                return;
            }
            if (r == null) continue;
            try {
                r.run();
            } catch (Throwable t) {
                LOG.error("{}: the listener failed on a delivery; delivery stops: {}", self, t.toString(), t);
                fail("group member " + self + ": delivery failed in the listener (" + t + "); it cannot skip a delivery the others have");
                return;
            }
        }
    }

    /** Records a fatal failure and tells the handler, now or as soon as one is registered. */
    private void fail(String reason) {
        Consumer<String> h;
        synchronized (this) {
            if (failure == null) failure = reason;
            if (fatalHandler == null || fatalReported) return;
            fatalReported = true;
            h = fatalHandler;
            reason = failure;
        }
        h.accept(reason);
    }

    /**
     * Registers what to do when this member can no longer follow the group (the listener failed on a
     * delivery): called once, at once if that already happened.
     */
    public void onFatal(Consumer<String> handler) {
        String reason;
        synchronized (this) {
            fatalHandler = handler;
            if (failure == null || fatalReported) return;
            fatalReported = true;
            reason = failure;
        }
        handler.accept(reason);
    }

    /** Why delivery stopped, or null while it goes on. */
    public synchronized String failure() { return failure; }

    private void tickLoop() {
        long interval = Math.max(1, settings.ackIntervalMs()) * 1_000_000 / 2;
        while (!closed) {
            java.util.concurrent.locks.LockSupport.parkNanos(interval);
            withCore(() -> core.onTick(now()));
        }
    }

    private void withCore(Runnable r) {
        lock.lock();
        try {
            r.run();
            leaseUntil = core.leaseExpiry();
        } catch (RuntimeException e) {
            LOG.error("{}: total-order protocol failed: {}", self, e.toString(), e);
            throw e;
        } finally {
            lock.unlock();
        }
    }

    // ------------------------------------------------------------------ Gcs

    @Override public int queuedDeliveries() { return deliveries.size(); }

    @Override public MsgId multicast(byte[] payload, Delivery delivery) {
        if (closed) throw new IllegalStateException(self + " is closed");
        lock.lock();
        try {
            long t = now();
            MsgId id = core.multicast(payload, delivery, t);
            core.onTick(t);
            return id;
        } finally {
            lock.unlock();
        }
    }

    @Override public MsgId changeSites(List<String> sites, byte[] payload) {
        if (closed) throw new IllegalStateException(self + " is closed");
        lock.lock();
        try {
            long t = now();
            MsgId id = core.changeSites(sites, payload, t);
            core.onTick(t);
            return id;
        } finally {
            lock.unlock();
        }
    }

    @Override public List<String> sites() { lock.lock(); try { return core.sites(); } finally { lock.unlock(); } }

    @Override public long uniformGsn() { lock.lock(); try { return core.uniformGsn(); } finally { lock.unlock(); } }

    @Override public String self() { return self; }
    /** Fault injection: drops everything received from these sites (a partition), or heals with an empty set. */
    public void partitionFrom(java.util.Set<String> sites) {
        ((WAN_DELAY) channel.getProtocolStack().findProtocol(WAN_DELAY.class)).partitionFrom(sites);
        LOG.warn("{}: {}", self, sites.isEmpty() ? "partition healed (fault injection)" : "cut off from " + sites + " (fault injection)");
    }

    @Override public boolean current() { return !closed && now() < leaseUntil; }
    @Override public GcsView view() { return view; }
    public JChannel channel() { return channel; }
    public boolean isPrimary() { lock.lock(); try { return core.isPrimary(); } finally { lock.unlock(); } }
    @Override public String toString() { lock.lock(); try { return core.toString(); } finally { lock.unlock(); } }

    /** Waits until this member is in a primary view with at least {@code sites} sites. */
    public void awaitPrimary(int sites, Duration timeout) throws TimeoutException, InterruptedException {
        long end = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < end) {
            GcsView v = view;
            if (v != null && v.primary() && v.sites().size() >= sites) return;
            Thread.sleep(10);
        }
        throw new TimeoutException(self + " not in a primary view of " + sites + " sites after " + timeout + ": " + this
                + ", JGroups view " + channel.getView());
    }

    @Override public void close() {
        if (closed) return;
        closed = true;
        Util.close(channel);
        stopThreads();
    }

    /** Crash: leave without a LEAVE, as a killed process would (for tests). */
    public void crash() {
        if (closed) return;
        closed = true;
        try {
            Util.shutdown(channel);
        } catch (Exception e) {
            LOG.warn("{}: shutdown: {}", self, e.toString());
        }
        stopThreads();
    }

    private void stopThreads() {
        sender.interrupt();
        deliverer.interrupt();
        ticker.interrupt();
    }

    // ------------------------------------------------------------------ JGroups Receiver

    @Override public void receive(Message msg) {
        if (closed) return;
        String from = nameOf(msg.getSrc());
        Proto p = Codec.decode(msg.getArray(), msg.getOffset(), msg.getLength());
        withCore(() -> {
            long t = now();
            core.onMessage(from, p, t);
            core.onTick(t);
        });
    }

    @Override public void viewAccepted(View v) {
        if (closed) return;
        Map<String, Address> map = new HashMap<>();
        List<String> names = new ArrayList<>();
        for (Address a : v.getMembers()) {
            String n = nameOf(a);
            names.add(n);
            map.put(n, a);
        }
        addresses = map;
        withCore(() -> core.onView(v.getViewId().getId(), names, now()));
    }

    private static String nameOf(Address a) {
        String n = NameCache.get(a);
        return n != null ? n : a.toString();
    }

    private final class ChannelEffects implements Effects {
        @Override public void send(String to, Proto msg) {
            byte[] buf = Codec.encode(msg);
            Address dest = to == null ? null : addresses.get(to);
            if (to != null && dest == null) { LOG.debug("{}: no address for {}, dropping {}", self, to, msg.getClass().getSimpleName()); return; }
            outbound.add(() -> {
                try {
                    Message m = new BytesMessage(dest, buf);
                    if (dest == null) m.setFlag(Message.TransientFlag.DONT_LOOPBACK);
                    channel.send(m);
                } catch (Exception e) {
                    if (!closed) LOG.warn("{}: send failed: {}", self, e.toString());
                }
            });
        }

        @Override public void optimistic(GcsMessage m) { deliveries.add(() -> listener.optimistic(m)); }
        @Override public void ordered(GcsMessage m, long gsn, long slot) { deliveries.add(() -> listener.ordered(m, gsn)); }
        @Override public void reliable(GcsMessage m) { deliveries.add(() -> listener.reliable(m)); }
        @Override public void view(GcsView v) { view = v; deliveries.add(() -> listener.viewChanged(v)); }
        @Override public void undeliverable(MsgId id, Delivery d, String reason) { deliveries.add(() -> listener.undeliverable(id, d, reason)); }
        @Override public void sitesChanged(List<String> sites, long gsn) { deliveries.add(() -> listener.sitesChanged(sites, gsn)); }
    }
}
