package org.wanrep.txn;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * Paces new updates at an origin while a member of the view catches up, so that it does catch up: a
 * site that replays what it missed while the others order at full speed falls behind for ever when it
 * applies no faster than they order (three replicas sharing cores, or simply a slower machine). Stopping
 * the others until it is back would stall the cluster for the whole replay, so instead each origin
 * admits updates at a rate it adjusts like TCP's congestion window (additive increase, multiplicative
 * decrease) on the signal the catching-up member reports every few milliseconds: how many ordered
 * transactions it still has to finish, and how far it has finished. While that lag shrinks fast enough the
 * rate grows; otherwise it drops by 30%, never below a quarter of what the origin admitted when pacing began
 * (nor below {@value #MIN_RATE} per second): the others keep acknowledging updates throughout, and a joiner that
 * does not shrink its lag at all (stuck, or far too slow) slows the cluster by a bounded factor, not to a halt. Fast enough: by a {@value #CATCH_UP_SECONDS}-th of itself per second
 * (at least {@value #MIN_SHRINK}), but never by more than {@value #JOINER_SHARE} of what the joiner
 * applies per second, so the others keep a share of its pace while the gap is large.
 *
 * <p>Pure logic with the clock passed in ({@link FlowControl} does the waiting), so that it can be tested
 * deterministically: {@code CatchUpPacerTest} runs a joiner against origins that offer more than it applies.
 */
final class CatchUpPacer {
    /** Updates per second an origin admits at least while pacing. */
    static final double MIN_RATE = 5;
    /** ... and at least this share of what it admitted when pacing began. */
    static final double MIN_SHARE = 0.25;
    /** The lag should shrink by this fraction's inverse of itself per second (a catch-up in about this many seconds). */
    static final double CATCH_UP_SECONDS = 20;
    /** ... and by at most this share of what it applies per second (the rest is the others' pace). */
    static final double JOINER_SHARE = 0.75;
    /** ... and by at least this many transactions per second. */
    static final double MIN_SHRINK = 20;
    /** How often the rate is adjusted per lagging member. */
    static final long CONTROL_NANOS = 500_000_000L;
    private static final long WINDOW_NANOS = 1_000_000_000L;

    private record Seen(long lag, long done, long atNanos) {}

    /** Lagging member -> the lag it reported at the last adjustment. */
    private final Map<String, Seen> lagging = new HashMap<>();
    /** Admissions per second while pacing; 0: not pacing. */
    private double rate;
    /** The least rate while pacing (a share of the rate pacing began at). */
    private double floor;
    /** The next admission's earliest time while pacing. */
    private long nextSlot = Long.MIN_VALUE;
    /** Admissions counted in the current and the last full window, to start pacing from what the origin did. */
    private long windowStart = Long.MIN_VALUE, windowCount;
    private double lastWindowRate;

    /**
     * A member's report: {@code lag} ordered transactions still to finish while catching up (0 when it
     * serves), {@code done} how many it has finished (any count that grows by one per transaction, e.g. its GSN).
     */
    synchronized void lag(String member, long lag, long done, long now) {
        if (lag <= 0) {
            if (lagging.remove(member) != null && lagging.isEmpty()) stopPacing();
            return;
        }
        Seen s = lagging.get(member);
        if (s == null) {
            lagging.put(member, new Seen(lag, done, now));
            if (rate == 0) {
                rate = Math.max(MIN_RATE, measuredRate(now));
                floor = Math.max(MIN_RATE, MIN_SHARE * rate);
                nextSlot = now;
            }
            return;
        }
        if (now - s.atNanos() < CONTROL_NANOS) return;
        double seconds = (now - s.atNanos()) / 1e9;
        double shrink = (s.lag() - lag) / seconds, applied = (done - s.done()) / seconds;
        double wanted = Math.max(MIN_SHRINK, Math.min(lag / CATCH_UP_SECONDS, JOINER_SHARE * applied));
        rate = shrink < wanted ? Math.max(floor, rate * 0.7) : rate * 1.1 + 1;
        lagging.put(member, new Seen(lag, done, now));
    }

    /** Only these members count (a view change): a member that left no longer slows anyone. */
    synchronized void retain(Set<String> members) {
        if (lagging.keySet().retainAll(members) && lagging.isEmpty()) stopPacing();
    }

    /**
     * Takes the next admission: how many nanoseconds from {@code now} the update must wait (0 when no
     * member is catching up). Each admission reserves its slot, so concurrent clients queue in turn.
     */
    synchronized long admit(long now) {
        count(now);
        if (rate == 0) return 0;
        long slot = Math.max(now, nextSlot);
        nextSlot = slot + (long) (1e9 / rate);
        return slot - now;
    }

    /** Admissions per second while pacing, 0 when not. */
    synchronized double rate() { return rate; }

    private void stopPacing() {
        rate = 0;
        nextSlot = Long.MIN_VALUE;
    }

    private void count(long now) {
        if (windowStart == Long.MIN_VALUE) windowStart = now;
        if (now - windowStart >= WINDOW_NANOS) {
            lastWindowRate = windowCount * 1e9 / (now - windowStart);
            windowStart = now;
            windowCount = 0;
        }
        windowCount++;
    }

    private double measuredRate(long now) {
        if (windowStart == Long.MIN_VALUE) return 0;
        long open = now - windowStart;
        return open >= WINDOW_NANOS / 2 ? Math.max(lastWindowRate, windowCount * 1e9 / open) : lastWindowRate;
    }
}
