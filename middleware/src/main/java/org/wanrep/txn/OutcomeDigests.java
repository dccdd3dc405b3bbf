package org.wanrep.txn;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Compares what the sites' replicas made of the same ordered transactions (pure, no I/O; {@link OutcomeAudit}
 * sends and receives). Every site runs every ordered update, and each decides alone whether it committed or failed
 * and what it did (its command tags with their row counts, its SQLSTATE). A difference means a replica no longer
 * follows the others: a table created directly in one replica, a row changed behind the proxy, a disk full at one
 * site, a source of non-determinism not yet refused. Without this, the site whose request failed took the failure
 * for a deterministic one and went on, and the replicas differed silently.
 *
 * <p>Each site sums a hash of (GSN, outcome) over its finished GSNs (a sum: transactions finish out of GSN order)
 * and keeps the running prefix per GSN for the last {@code capacity} GSNs, so that it can compute the digest of any
 * range (from, to] it executed whole. It reports the ranges it closed; a receiver compares each with its own digest
 * of the same range, now or once it got that far. A range with a GSN this site did not execute (it had it from a
 * state transfer or a restart) is never reported nor compared.
 *
 * <p>Who stops: a site stops once the members it differs from are at least half of the view (a strict majority of
 * the view then agrees with none of its outcomes); the others go on. With two sites, or an even split, every side
 * stops: nobody can tell which replica is right, and answering from a wrong one is worse than answering nothing.
 */
public final class OutcomeDigests {
    /** A range of GSNs (from, to] and the sum of its outcomes' hashes. */
    public record Range(long from, long to, long digest) {}

    /** A remote range that differed from this site's. */
    public record Difference(String member, Range theirs, long mine) {}

    private final int capacity;
    private final long[] prefix;
    /** Every GSN up to this one is summed into {@link #prefix}. */
    private long prefixThrough = -1;
    /** Ranges must start at or after this GSN: every GSN after it was delivered and executed here. -1: none yet. */
    private long validFrom = -1;
    /** The highest GSN delivered here (ranges end at or before it). */
    private long highestSeen = -1;
    /** The end of the last range reported. */
    private long reportedTo = -1;
    /** Outcomes of GSNs above {@link #prefixThrough}, waiting for the GSNs below them to finish. */
    private final Map<Long, Long> finished = new HashMap<>();
    /** Ranges from other members that reach beyond what this site has finished (bounded per member). */
    private final Map<String, ArrayDeque<Range>> waiting = new LinkedHashMap<>();
    private static final int WAITING_PER_MEMBER = 256;
    /** Members whose outcomes differed from this site's. */
    private final Set<String> differing = new TreeSet<>();
    private long compared;

    public OutcomeDigests(int capacity) {
        if (Integer.bitCount(capacity) != 1) throw new IllegalArgumentException("capacity must be a power of two");
        this.capacity = capacity;
        this.prefix = new long[capacity];
    }

    /** A GSN was delivered here (every ordered delivery, whatever its kind). */
    public synchronized void seen(long gsn) {
        if (gsn <= highestSeen) reset(gsn - 1);   // a new history (GSNs count from 1 again): nothing before means anything now
        if (prefixThrough < 0) {   // the first delivery (since a reset): sums start here
            prefixThrough = gsn - 1;
            prefix[(int) (prefixThrough & (capacity - 1))] = 0;
        }
        if (highestSeen < 0 || gsn > highestSeen + 1) validFrom = Math.max(validFrom, gsn - 1);   // what came between was never delivered here
        highestSeen = gsn;
    }

    /** A delivered GSN this site did not execute (its replica had it already): no range may include it. */
    public synchronized void skipped(long gsn) {
        validFrom = Math.max(validFrom, gsn);
        finished.remove(gsn);
    }

    /** The transaction at {@code gsn} reached its outcome here (a hash of it, see {@link #outcome}). */
    public synchronized void finished(long gsn, long outcome) {
        if (gsn > prefixThrough) finished.put(gsn, outcome);
    }

    /**
     * Every GSN up to {@code done} has finished here. Returns the range to report (every GSN since the last
     * report that this site executed), or null if there is none yet.
     */
    public synchronized Range advance(long done) {
        if (prefixThrough < 0) return null;   // nothing delivered yet
        if (done < prefixThrough) {   // the replica's position went back (a new history): start afresh
            reset(done);
            return null;
        }
        if (done - prefixThrough > capacity) {   // a jump (a copy's position): nothing below it was executed here
            long base = done;
            prefixThrough = base;
            prefix[(int) (base & (capacity - 1))] = 0;
            validFrom = Math.max(validFrom, base);
            finished.keySet().removeIf(g -> g <= base);
        }
        for (long g = prefixThrough + 1; g <= done; g++) {
            Long h = finished.remove(g);
            prefix[(int) (g & (capacity - 1))] = prefix[(int) ((g - 1) & (capacity - 1))] + (h == null ? 0 : mix(g, h));
        }
        prefixThrough = Math.max(prefixThrough, done);
        long from = Math.max(Math.max(reportedTo, validFrom), oldest()), to = Math.min(prefixThrough, highestSeen);
        if (to <= from) return null;
        reportedTo = to;
        return new Range(from, to, digest(from, to));
    }

    /**
     * Another member's range: compared with this site's digest of the same GSNs now, or kept until this site got
     * that far (or dropped if this site cannot compare it: it did not execute all of it, or it forgot it). Returns the
     * differences found, with earlier ranges of any member that could be compared now.
     */
    public synchronized List<Difference> remote(String member, Range r) {
        ArrayDeque<Range> q = waiting.computeIfAbsent(member, m -> new ArrayDeque<>());
        q.addLast(r);
        while (q.size() > WAITING_PER_MEMBER) q.removeFirst();
        return compareWaiting();
    }

    /** Compares the remote ranges kept back so far (after this site advanced). */
    public synchronized List<Difference> recheck() { return compareWaiting(); }

    private List<Difference> compareWaiting() {
        List<Difference> out = new ArrayList<>();
        for (var e : waiting.entrySet()) {
            for (var it = e.getValue().iterator(); it.hasNext(); ) {
                Range x = it.next();
                if (x.to() > Math.min(prefixThrough, highestSeen)) continue;   // not that far yet
                it.remove();
                if (x.from() < Math.max(validFrom, oldest()) || prefixThrough < 0) continue;   // cannot compare
                compared++;
                long mine = digest(x.from(), x.to());
                if (mine != x.digest()) {
                    differing.add(e.getKey());
                    out.add(new Difference(e.getKey(), x, mine));
                }
            }
        }
        return out;
    }

    /** Members left the view: they neither count against this site nor wait any longer. */
    public synchronized void retain(Collection<String> members) {
        differing.retainAll(members);
        waiting.keySet().retainAll(members);
    }

    /** Whether this site must stop: the view's members it differs from are at least half of a view of {@code viewSize}. */
    public synchronized boolean mustStop(int viewSize) { return !differing.isEmpty() && differing.size() * 2 >= viewSize; }

    /** Members this site differed from. */
    public synchronized Set<String> differing() { return new TreeSet<>(differing); }

    /** Remote ranges compared so far (diagnostics, tests). */
    public synchronized long compared() { return compared; }

    /** The hash of one transaction's outcome: whether it committed and a digest of what it did (0: nothing known). */
    public static long outcome(boolean committed, long work) { return mix(work, committed ? 1 : 2); }

    private long oldest() { return Math.max(0, prefixThrough - capacity + 1); }

    private long digest(long from, long to) {
        return prefix[(int) (to & (capacity - 1))] - prefix[(int) (from & (capacity - 1))];
    }

    private void reset(long base) {
        prefixThrough = -1;
        validFrom = Math.max(-1, base);
        highestSeen = base;
        reportedTo = -1;
        finished.clear();
        waiting.clear();
    }

    /** A 64-bit mix (SplitMix64's finalizer) of a GSN and its outcome: sums of these tell ranges apart. */
    static long mix(long gsn, long outcome) {
        long z = gsn * 0x9E3779B97F4A7C15L + outcome;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
