package org.wanrep.gcs.jgroups;

import org.jgroups.Address;
import org.jgroups.BytesMessage;
import org.jgroups.JChannel;
import org.jgroups.Message;
import org.jgroups.Receiver;
import org.jgroups.View;
import org.jgroups.util.MessageBatch;
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
 * JGroups' receive threads, view changes and a ticker that sleeps until the core's next deadline
 * ({@link TotalOrderCore#nextDeadline}); what it sends goes out on a sender thread (so flow control never
 * blocks the protocol), and what it delivers reaches the listener on one delivery thread, in order.
 *
 * <p>The sender thread takes everything queued at once and sends the multicasts among it as one JGroups
 * message, a bundle ({@link Codec#bundle}, in queue order, up to {@link #MAX_BUNDLE_BYTES}); unicasts (flush
 * traffic to one member) go alone. A receiver feeds all messages of a bundle, or of a JGroups batch, to the
 * core under one lock acquisition and runs the core's post-step once. So the sequencer's own DATA goes out
 * with its ORDER, and a burst of multicasts costs one trip through the JGroups stack. The sender thread writes
 * to the connections itself ({@link DirectSendBundler}); received messages reach {@link #receive} from the
 * WAN emulation's lane threads ({@link WanDelayPolicy}), or JGroups' pool without a latency matrix.
 */
public final class JGroupsGcs implements Gcs, Receiver {
    private static final Logger LOG = LoggerFactory.getLogger(JGroupsGcs.class);

    private final String self;
    private final JChannel channel;
    private final TotalOrderCore core;
    private final GcsListener listener;
    /** Payload bytes of one bundle at most (JGroups' FRAG4 fragments a large message anyway). */
    static final int MAX_BUNDLE_BYTES = 1 << 20;
    /** The ticker wakes at least this often, deadline or not (a safety net). */
    private static final long MAX_TICK_SLEEP_MS = 100;

    private final ReentrantLock lock = new ReentrantLock();
    /** A message for the sender thread: {@code dest} null for a multicast; {@code buf} one encoded message. */
    private record Outgoing(Address dest, byte[] buf) {}
    /** What the core sent in the current step (guarded by the lock): queued as one unit when the step ends. */
    private List<Outgoing> stepOut = new ArrayList<>();
    /** Each core step's messages, in order, for the sender thread: one step's multicasts always share a bundle. */
    private final LinkedBlockingQueue<List<Outgoing>> outbound = new LinkedBlockingQueue<>();
    /** When the ticker wakes next ({@link #now()} clock): lowered, and the ticker unparked, by any step that brings the core's deadline forward. */
    private volatile long tickAt = Long.MIN_VALUE;
    private final java.util.concurrent.atomic.LongAdder sentFrames = new java.util.concurrent.atomic.LongAdder(),
            sentMessages = new java.util.concurrent.atomic.LongAdder(), tickerWakeups = new java.util.concurrent.atomic.LongAdder();
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
        sender = Thread.ofPlatform().daemon().name("gcs-send-" + self).start(this::sendLoop);
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

    /** Sends what the core queued: everything queued at the moment in one go, the multicasts bundled. */
    private void sendLoop() {
        DirectSendBundler.sendDirectly();   // this thread may block in a send: it writes to the connections itself
        List<List<Outgoing>> steps = new ArrayList<>();
        List<Outgoing> batch = new ArrayList<>();
        while (!closed) {
            try {
                List<Outgoing> first = outbound.poll(100, TimeUnit.MILLISECONDS);
                if (first == null) continue;
                steps.add(first);
                outbound.drainTo(steps);
                for (List<Outgoing> step : steps) batch.addAll(step);
                sendAll(batch);
            } catch (InterruptedException e) {
                return;
            } catch (Throwable t) {
                LOG.error("{}: {}", self, t.toString(), t);
            } finally {
                steps.clear();
                batch.clear();
            }
        }
    }

    /**
     * In queue order: consecutive multicasts as bundles of at most {@link #MAX_BUNDLE_BYTES} (one message
     * alone goes unframed), each unicast alone (a pending bundle goes first, so the send order is the queue's).
     */
    private void sendAll(List<Outgoing> batch) {
        List<byte[]> bundle = new ArrayList<>();
        long bytes = 0;
        for (Outgoing o : batch) {
            if (o.dest() != null) {
                sendBundle(bundle);
                bytes = 0;
                transmit(o.dest(), o.buf(), 1);
                continue;
            }
            if (!bundle.isEmpty() && bytes + o.buf().length > MAX_BUNDLE_BYTES) { sendBundle(bundle); bytes = 0; }
            bundle.add(o.buf());
            bytes += o.buf().length;
        }
        sendBundle(bundle);
    }

    private void sendBundle(List<byte[]> bundle) {
        if (bundle.isEmpty()) return;
        transmit(null, bundle.size() == 1 ? bundle.get(0) : Codec.bundle(bundle), bundle.size());
        bundle.clear();
    }

    private void transmit(Address dest, byte[] frame, int messages) {
        try {
            Message m = new BytesMessage(dest, frame);
            if (dest == null) m.setFlag(Message.TransientFlag.DONT_LOOPBACK);
            channel.send(m);
            sentFrames.increment();
            sentMessages.add(messages);
        } catch (Exception e) {
            if (!closed) LOG.warn("{}: send failed: {}", self, e.toString());
        }
    }

    /**
     * What this member sent so far: JGroups messages ({@code frames}, bundles counted once), total-order
     * protocol messages in them, and how often the ticker woke up.
     */
    public record SendStats(long frames, long messages, long tickerWakeups) {}

    public SendStats sendStats() { return new SendStats(sentFrames.sum(), sentMessages.sum(), tickerWakeups.sum()); }

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

    /**
     * Ticks the core at its deadlines: sleeps until {@link #tickAt}, which the tick itself sets to the core's
     * {@link TotalOrderCore#nextDeadline} (at most {@link #MAX_TICK_SLEEP_MS} ahead) and every other step lowers
     * when it brings the deadline forward (unparking this thread). An idle member so wakes for its heartbeats
     * and the safety net only. The tick also wakes when ACK pacing next lets an ACK go
     * ({@link TotalOrderCore#ackPacingEnd}), whether news has come by then or not: the step that brings the news
     * then sets no earlier deadline and needs no unpark (under load, one wake-up per paced ACK instead of two).
     */
    private void tickLoop() {
        while (!closed) {
            withCore(() -> {
                long t = now();
                core.onTick(t);
                tickAt = t + MAX_TICK_SLEEP_MS;   // afterStep (withCore) brings it down to the deadline
            });
            tickerWakeups.increment();
            long wait;
            while (!closed && (wait = tickAt * 1_000_000 - System.nanoTime()) > 0)
                java.util.concurrent.locks.LockSupport.parkNanos(this, wait);
        }
    }

    private void withCore(Runnable r) {
        lock.lock();
        try {
            r.run();
            afterStep();
        } catch (RuntimeException e) {
            LOG.error("{}: total-order protocol failed: {}", self, e.toString(), e);
            throw e;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Under the lock, after the core changed: hands what it sent to the sender thread, publishes the lease and
     * wakes the ticker if its deadline came forward.
     */
    private void afterStep() {
        if (!stepOut.isEmpty()) {
            outbound.add(stepOut);
            stepOut = new ArrayList<>(4);
        }
        leaseUntil = core.leaseExpiry();
        long t = now();
        // a deadline the last tick left due (it cannot: the tick acted on it) would make the ticker spin: 1 ms later then
        boolean onTicker = Thread.currentThread() == ticker;
        long d = Math.max(core.nextDeadline(t), t + (onTicker ? 1 : 0));
        if (onTicker) {
            // the ticker also wakes when pacing next lets an ACK go: a step that brings news then sets that
            // very deadline and need not wake it (one hand-off fewer per paced ACK; a tick with nothing due does nothing)
            long p = core.ackPacingEnd();
            if (p > t && p < d) d = p;
        }
        if (d < tickAt) {
            tickAt = d;
            if (!onTicker) java.util.concurrent.locks.LockSupport.unpark(ticker);
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
            afterStep();
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
            afterStep();
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
        List<Proto> ps = Codec.decodeAll(msg.getArray(), msg.getOffset(), msg.getLength());
        withCore(() -> {
            long t = now();
            for (Proto p : ps) core.onMessage(from, p, t);
            core.onTick(t);
        });
    }

    /** A JGroups batch (one sender's messages that arrived together): decoded first, then fed to the core in one step. */
    @Override public void receive(MessageBatch batch) {
        if (closed) return;
        List<String> froms = new ArrayList<>(batch.size());
        List<List<Proto>> frames = new ArrayList<>(batch.size());
        for (Message msg : batch) {
            Address src = msg.getSrc() != null ? msg.getSrc() : batch.sender();
            froms.add(nameOf(src));
            frames.add(Codec.decodeAll(msg.getArray(), msg.getOffset(), msg.getLength()));
        }
        if (frames.isEmpty()) return;
        withCore(() -> {
            long t = now();
            for (int i = 0; i < frames.size(); i++)
                for (Proto p : frames.get(i)) core.onMessage(froms.get(i), p, t);
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
            stepOut.add(new Outgoing(dest, buf));   // under the lock; afterStep queues the step's messages together
        }

        @Override public void optimistic(GcsMessage m) { deliveries.add(() -> listener.optimistic(m)); }
        @Override public void ordered(GcsMessage m, long gsn, long slot) { deliveries.add(() -> listener.ordered(m, gsn)); }
        @Override public void reliable(GcsMessage m) { deliveries.add(() -> listener.reliable(m)); }
        @Override public void view(GcsView v) { view = v; deliveries.add(() -> listener.viewChanged(v)); }
        @Override public void undeliverable(MsgId id, Delivery d, String reason) { deliveries.add(() -> listener.undeliverable(id, d, reason)); }
        @Override public void sitesChanged(List<String> sites, long gsn) { deliveries.add(() -> listener.sitesChanged(sites, gsn)); }
    }
}
