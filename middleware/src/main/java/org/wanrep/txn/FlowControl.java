package org.wanrep.txn;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.wanrep.gcs.Delivery;
import org.wanrep.gcs.Gcs;
import org.wanrep.gcs.GcsListener;
import org.wanrep.gcs.GcsMessage;
import org.wanrep.gcs.GcsView;
import org.wanrep.gcs.MsgId;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.ByteArrayInputStream;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.IntSupplier;

/**
 * Flow control: ordering must not outrun execution without bound. Every site multicasts its backlog
 * (transactions delivered and not finished, {@link ReplicationEngine#pending()}) as a small RELIABLE
 * message whenever it changed, at most every {@code flow.report_interval_ms}, and at least once a second.
 * A new update (an autocommit request or a block's BEGIN; never a block's log or release, which end work
 * that holds locks already) waits at its origin, before it is multicast, while any member of the primary
 * view last reported a backlog above {@code flow.max_backlog} transactions or {@code flow.max_backlog_mb} of their SQL and
 * data (so that a slow site's backlog of large requests cannot exhaust its memory). It waits at most {@code flow.wait_timeout_ms};
 * then the client gets SQLSTATE 53400 (configuration_limit_exceeded): the limit, not the client, decided,
 * and nothing was ordered, so the request may simply be retried.
 *
 * <p>A member that left the view no longer counts. A paused member (SIGSTOP) stops reporting: its last
 * report counts until the group suspects it, so the others go on as far as that report allows.
 *
 * <p>A member catching up after it was away (its backlog is what it replays and what queues behind the
 * replay, not yet delivered to its engine) reports that lag too, and while it is above zero every origin
 * paces its new updates ({@link CatchUpPacer}) so that the lag shrinks while the others keep
 * acknowledging; a state transfer reports no lag (its time does not depend on the load).
 */
public final class FlowControl {
    private static final Logger LOG = LoggerFactory.getLogger(FlowControl.class);
    /** First bytes of a report, telling it apart from a write set (whose first byte is its codec version, 1). */
    private static final int MAGIC = 0x57464C57;   // "WFLW"

    /** A site's last report: its site name, backlog (transactions, and bytes of their SQL and data), when it arrived here (nanoTime). */
    public record Report(String site, int backlog, long bytes, long lag, long done, long atNanos) {}

    /** The update was not let in within the wait: SQLSTATE 53400. */
    public static final class Throttled extends RuntimeException {
        public Throttled(String message) { super(message, null, false, false); }
        public String sqlState() { return "53400"; }
    }

    /** No limit: every update goes at once (engines built without a site, e.g. in unit tests). */
    public static final FlowControl NONE = new FlowControl("", 0, 0, 0, 100);

    private final String site;
    private final int maxBacklog;
    private final long maxBacklogBytes;
    private final long waitTimeoutMs;
    private final long reportIntervalMs;
    /** Last report per group member (member name), this site's own included. */
    private final Map<String, Report> reports = new LinkedHashMap<>();
    private final CatchUpPacer pacer = new CatchUpPacer();
    private volatile Thread reporter;

    /** {@code maxBacklog} 0 turns flow control off (reports are still sent, for {@code SHOW wanrep.sites}). */
    public FlowControl(String site, int maxBacklog, long waitTimeoutMs, long reportIntervalMs) {
        this(site, maxBacklog, 0, waitTimeoutMs, reportIntervalMs);
    }

    /** As above, also holding updates back while a site's backlog is above {@code maxBacklogBytes} (0: no such limit). */
    public FlowControl(String site, int maxBacklog, long maxBacklogBytes, long waitTimeoutMs, long reportIntervalMs) {
        this.site = site;
        this.maxBacklog = maxBacklog;
        this.maxBacklogBytes = maxBacklogBytes;
        this.waitTimeoutMs = waitTimeoutMs;
        this.reportIntervalMs = Math.max(1, reportIntervalMs);
    }

    public int maxBacklog() { return maxBacklog; }

    /**
     * The throttle decision: the members of {@code primary} (the current view; null or not primary: none)
     * whose last reported backlog is above a limit, as "site (backlog)", or empty if an update may go.
     */
    public synchronized String overLimit(GcsView view) {
        if (maxBacklog <= 0 || view == null || !view.primary()) return "";
        return overLimit(view.members());
    }

    synchronized String overLimit(Collection<String> members) {
        StringBuilder b = new StringBuilder();
        for (String m : members) {
            Report r = reports.get(m);
            if (r == null || over(r).isEmpty()) continue;
            b.append(b.isEmpty() ? "" : ", ").append(r.site()).append(" (").append(r.backlog());
            if (maxBacklogBytes > 0 && r.bytes() > maxBacklogBytes) b.append(" transactions, ").append(r.bytes() >> 20).append(" MB");
            b.append(')');
        }
        return b.toString();
    }

    /** Which limit {@code r} is above, as its setting's name, or empty (flow control off, or under both). */
    public String over(Report r) {
        if (maxBacklog <= 0) return "";
        if (r.backlog() > maxBacklog) return "flow.max_backlog";
        return maxBacklogBytes > 0 && r.bytes() > maxBacklogBytes ? "flow.max_backlog_mb" : "";
    }

    /**
     * Waits (bounded) until no member of the engine's current view is over the limit. Outside a primary
     * view it lets the request through: ordering then fails as it always did.
     */
    public void admit(java.util.function.Supplier<GcsView> view) throws InterruptedException {
        if (maxBacklog <= 0) return;
        long end = System.nanoTime() + waitTimeoutMs * 1_000_000L;
        synchronized (this) {
            String over;
            while (!(over = overLimit(view.get())).isEmpty()) {
                long left = (end - System.nanoTime()) / 1_000_000L;
                if (left <= 0)
                    throw new Throttled("wanrep: update not ordered: the backlog of delivered transactions not yet executed is above flow.max_backlog = "
                            + maxBacklog + (maxBacklogBytes > 0 ? " or flow.max_backlog_mb = " + (maxBacklogBytes >> 20) : "")
                            + " at " + over + " for more than " + waitTimeoutMs + " ms");
                wait(Math.min(left, 50));   // a report notifies; the view may change without one
            }
        }
        long delay = pacer.admit(System.nanoTime());
        if (delay <= 0) return;
        if (System.nanoTime() + delay - end > 0)
            throw new Throttled("wanrep: update not ordered: a site catching up paces new updates to "
                    + Math.round(pacer.rate()) + " per second here, and this one's turn came after flow.wait_timeout_ms = " + waitTimeoutMs + " ms");
        java.util.concurrent.TimeUnit.NANOSECONDS.sleep(delay);
    }

    /** Records a report (also used for this site's own backlog) and wakes waiting updates. */
    public void report(String member, String site, int backlog) { report(member, site, backlog, 0, 0, 0); }

    /**
     * Records a report with the bytes of the backlog's SQL and data, the member's catch-up lag (0: it serves) and
     * the GSN it finished everything up to, and wakes waiting updates.
     */
    public synchronized void report(String member, String site, int backlog, long bytes, long lag, long done) {
        long now = System.nanoTime();
        reports.put(member, new Report(site, backlog, bytes, lag, done, now));
        pacer.lag(member, lag, done, now);
        notifyAll();
    }

    /** Last reports by member, for {@code SHOW wanrep.sites}. */
    public synchronized Map<String, Report> reports() { return new LinkedHashMap<>(reports); }

    // ------------------------------------------------------------------ reports on the group

    static byte[] encode(String site, int backlog) { return encode(site, backlog, 0, 0, 0); }

    static byte[] encode(String site, int backlog, long bytes, long lag, long done) {
        ByteArrayOutputStream encoded = new ByteArrayOutputStream(48);
        try (DataOutputStream out = new DataOutputStream(encoded)) {
            out.writeInt(MAGIC);
            out.writeUTF(site);
            out.writeInt(backlog);
            out.writeLong(lag);   // appended: a site that reads only the backlog ignores them
            out.writeLong(done);
            out.writeLong(bytes);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return encoded.toByteArray();
    }

    static boolean isReport(byte[] payload) { return GroupReports.startsWith(payload, MAGIC); }

    void received(GcsMessage m) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(m.payload()))) {
            in.readInt();
            String s = in.readUTF();
            int backlog = in.readInt();
            long lag = 0, done = 0, bytes = 0;
            if (in.available() >= 16) {
                lag = in.readLong();
                done = in.readLong();
            }
            if (in.available() >= 8) bytes = in.readLong();
            report(m.sender(), s, backlog, bytes, lag, lag > 0 ? done : 0);
        } catch (IOException e) {
            LOG.error("undecodable backlog report from {}: {}", m.sender(), e.toString());
        }
    }

    /** This member's latest backlog reports (a bounded set: gcs tells of undelivered ones at a view change). */
    private final java.util.Set<MsgId> sentReports = GroupReports.sentIds();

    /** {@code engine} behind a listener that takes the backlog reports out of the RELIABLE stream. */
    public GcsListener intercept(GcsListener engine) {
        return new GcsListener() {
            @Override public void optimistic(GcsMessage m) { engine.optimistic(m); }
            @Override public void ordered(GcsMessage m, long gsn) { engine.ordered(m, gsn); }
            @Override public void reliable(GcsMessage m) {
                if (isReport(m.payload())) received(m);
                else engine.reliable(m);
            }
            @Override public void viewChanged(GcsView v) {
                engine.viewChanged(v);
                synchronized (FlowControl.this) {
                    // a member that left no longer holds anyone back; it reports afresh if it comes back
                    reports.keySet().retainAll(v.members());
                    pacer.retain(new java.util.HashSet<>(v.members()));
                    FlowControl.this.notifyAll();
                }
            }
            @Override public void undeliverable(MsgId id, Delivery d, String reason) {
                // a lost backlog report is harmless (the next one replaces it); the engine takes any other lost
                // RELIABLE message for a write set the others lack, and stops the site
                if (d == Delivery.RELIABLE && sentReports.remove(id)) {
                    LOG.debug("backlog report {} not delivered ({})", id, reason);
                    return;
                }
                engine.undeliverable(id, d, reason);
            }
        };
    }

    /**
     * Starts reporting this site's {@code backlog} (transactions, and {@code bytes} of their SQL and data), catch-up
     * {@code lag} and the GSN it finished everything up to ({@code done}) on {@code gcs} as member {@code self}.
     */
    public void start(Gcs gcs, String self, IntSupplier backlog, java.util.function.LongSupplier bytes,
                      java.util.function.LongSupplier lag, java.util.function.LongSupplier done) {
        Thread t = Thread.ofPlatform().daemon().name("wanrep-flow-" + site).start(() -> {
            int last = -1;
            long lastSent = 0, lastLag = -1, lastBytes = -1;
            while (!Thread.currentThread().isInterrupted()) {
                try {
                    int b = backlog.getAsInt();
                    long by = bytes.getAsLong(), l = lag.getAsLong(), d = l > 0 ? done.getAsLong() : 0;
                    report(self, site, b, by, l, d);   // our own, at once (the looped-back copy says the same)
                    if (b != last || by != lastBytes || l != lastLag || l > 0 || System.nanoTime() - lastSent > 1_000_000_000L) {
                        MsgId id = gcs.multicast(encode(site, b, by, l, d), Delivery.RELIABLE);
                        if (id != null) sentReports.add(id);
                        last = b;
                        lastBytes = by;
                        lastLag = l;
                        lastSent = System.nanoTime();
                    }
                    Thread.sleep(reportIntervalMs);
                } catch (InterruptedException e) {
                    return;
                } catch (RuntimeException e) {
                    // e.g. outside the primary component, or the member is closing: the next round tries again
                    LOG.debug("backlog report not sent: {}", e.toString());
                    try {
                        Thread.sleep(reportIntervalMs);
                    } catch (InterruptedException x) {
                        return;
                    }
                }
            }
        });
        reporter = t;
    }

    public void stop() {
        Thread t = reporter;
        if (t != null) t.interrupt();
    }
}
