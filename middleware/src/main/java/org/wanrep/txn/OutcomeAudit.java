package org.wanrep.txn;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.wanrep.gcs.Delivery;
import org.wanrep.gcs.Gcs;
import org.wanrep.gcs.GcsListener;
import org.wanrep.gcs.GcsMessage;
import org.wanrep.gcs.GcsView;
import org.wanrep.gcs.MsgId;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * The sites compare their transactions' outcomes ({@link OutcomeDigests} decides; this class sends and receives).
 * Every {@code audit.report_interval_ms} a site multicasts, as a small RELIABLE message, the digest of the GSNs it
 * finished since its last report; every other site compares it with its own and a site whose outcomes a majority
 * of the view does not share stops (fail-stop), instead of serving from a replica that silently differs.
 */
public final class OutcomeAudit {
    private static final Logger LOG = LoggerFactory.getLogger(OutcomeAudit.class);
    /** First bytes of a report, telling it apart from write sets and backlog reports. */
    private static final int MAGIC = 0x574F5554;   // "WOUT"

    /** No audit (engines built without a site, e.g. in unit tests). */
    public static final OutcomeAudit NONE = new OutcomeAudit("", 0);

    private final String site;
    private final long intervalMs;
    private final OutcomeDigests digests = new OutcomeDigests(1 << 16);
    private volatile Consumer<String> fatal = reason -> LOG.error("{}", reason);
    private volatile int viewSize = 1;
    private volatile String self = "";
    private volatile Thread reporter;
    /** This member's reports not yet delivered (bounded: gcs tells of undelivered ones at a view change). */
    private final java.util.Set<MsgId> sent = GroupReports.sentIds();

    /** {@code intervalMs} 0 turns the audit off (outcomes are still recorded, cheaply, but never compared). */
    public OutcomeAudit(String site, long intervalMs) {
        this.site = site;
        this.intervalMs = intervalMs;
    }

    public boolean enabled() { return intervalMs > 0; }

    /** What to do when this site's outcomes differ from the view's majority: the site stops. */
    public void onDivergence(Consumer<String> f) { this.fatal = f; }

    // ------------------------------------------------------------------ from the engine (its monitor held)

    /** A delivery was ordered here (any kind). */
    public void seen(long gsn) { if (enabled()) digests.seen(gsn); }

    /** A delivery this site did not execute (its replica had it already). */
    public void skipped(long gsn) { if (enabled()) digests.skipped(gsn); }

    /** An ordered update finished here: committed or failed, and a digest of what it did (0: not known). */
    public void finished(long gsn, boolean committed, long work) {
        if (enabled()) digests.finished(gsn, OutcomeDigests.outcome(committed, work));
    }

    /** Remote ranges compared so far (tests). */
    public long compared() { return digests.compared(); }

    // ------------------------------------------------------------------ on the group

    static byte[] encode(String site, OutcomeDigests.Range r) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(48);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeInt(MAGIC);
            out.writeUTF(site);
            out.writeLong(r.from());
            out.writeLong(r.to());
            out.writeLong(r.digest());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return bytes.toByteArray();
    }

    static boolean isReport(byte[] payload) { return GroupReports.startsWith(payload, MAGIC); }

    private void received(GcsMessage m) {
        if (m.sender().equals(self)) return;
        OutcomeDigests.Range r;
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(m.payload()))) {
            in.readInt();
            in.readUTF();   // the sender's site, for a person reading a capture
            r = new OutcomeDigests.Range(in.readLong(), in.readLong(), in.readLong());
        } catch (IOException e) {
            LOG.error("undecodable outcome report from {}: {}", m.sender(), e.toString());
            return;
        }
        judge(digests.remote(m.sender(), r));
    }

    private void judge(List<OutcomeDigests.Difference> ds) {
        for (OutcomeDigests.Difference d : ds)
            LOG.error("site {}: the outcomes of GSNs {} to {} differ at {} (digest {}) from this site's ({}): one of the replicas no longer follows",
                    site, d.theirs().from() + 1, d.theirs().to(), d.member(), Long.toHexString(d.theirs().digest()), Long.toHexString(d.mine()));
        if (!ds.isEmpty() && digests.mustStop(viewSize)) {
            OutcomeDigests.Difference d = ds.get(0);
            fatal.accept("site " + site + "'s replica differs: the outcomes of its transactions (GSNs " + (d.theirs().from() + 1) + " to "
                    + d.theirs().to() + ") differ from those of " + digests.differing() + ", at least half of the view's " + viewSize
                    + " members (committed or failed, command tags and row counts, SQLSTATE)");
        }
    }

    /** {@code next} behind a listener that takes the outcome reports out of the RELIABLE stream. */
    public GcsListener intercept(GcsListener next) {
        return new GcsListener() {
            @Override public void optimistic(GcsMessage m) { next.optimistic(m); }
            @Override public void ordered(GcsMessage m, long gsn) { next.ordered(m, gsn); }
            @Override public void reliable(GcsMessage m) {
                if (isReport(m.payload())) {
                    if (enabled()) received(m);
                } else next.reliable(m);
            }
            @Override public void viewChanged(GcsView v) {
                next.viewChanged(v);
                if (v.primary()) viewSize = v.members().size();
                digests.retain(v.members());
            }
            @Override public void undeliverable(MsgId id, Delivery d, String reason) {
                // a lost report only leaves a range unchecked; any other lost RELIABLE message is the engine's
                if (d == Delivery.RELIABLE && sent.remove(id)) return;
                next.undeliverable(id, d, reason);
            }
        };
    }

    /** Starts reporting, as member {@code member} on {@code gcs}, the ranges up to what the engine finished ({@code done}). */
    public void start(Gcs gcs, String member, LongSupplier done) {
        if (!enabled()) return;
        self = member;
        reporter = Thread.ofPlatform().daemon().name("wanrep-audit-" + site).start(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                try {
                    Thread.sleep(intervalMs);
                    OutcomeDigests.Range r = digests.advance(done.getAsLong());
                    judge(digests.recheck());
                    if (r == null) continue;
                    MsgId id = gcs.multicast(encode(site, r), Delivery.RELIABLE);
                    if (id != null) sent.add(id);
                } catch (InterruptedException e) {
                    return;
                } catch (RuntimeException e) {
                    // e.g. outside the primary component, or the member is closing: that range goes unchecked
                    LOG.debug("outcome report not sent: {}", e.toString());
                }
            }
        });
    }

    public void stop() {
        Thread t = reporter;
        if (t != null) t.interrupt();
    }
}
