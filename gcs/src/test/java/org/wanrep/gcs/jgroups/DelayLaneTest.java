package org.wanrep.gcs.jgroups;

import org.jgroups.Message;
import org.jgroups.ObjectMessage;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

class DelayLaneTest {
    private record Run(List<String> names, boolean multicast, long at) {}

    private static Message msg(String name) { return new ObjectMessage(null, name); }

    private static long ms(long n) { return TimeUnit.MILLISECONDS.toNanos(n); }

    /**
     * FIFO whatever the due times (jitter may draw a later message an earlier one), and nothing before its due
     * time nor before the one of a message ahead of it.
     */
    @Test void releasesInArrivalOrderNeverBeforeDue() throws Exception {
        List<Run> runs = Collections.synchronizedList(new ArrayList<>());
        DelayLane lane = new DelayLane("test-lane", (run, mc) -> runs.add(new Run(names(run), mc, System.nanoTime())), () -> {});
        try {
            long t0 = System.nanoTime();
            long[] dues = {t0 + ms(30), t0 + ms(5), t0 + ms(40), t0 + ms(41), t0 + ms(10)};
            for (int i = 0; i < dues.length; i++) assertThat(lane.add(msg("m" + i), dues[i], true)).isTrue();
            awaitCount(runs, 5);
            List<String> order = new ArrayList<>();
            long latestDue = Long.MIN_VALUE;
            synchronized (runs) {
                for (Run r : runs) {
                    for (String n : r.names()) {
                        int i = Integer.parseInt(n.substring(1));
                        latestDue = Math.max(latestDue, dues[i]);
                        assertThat(r.at() - latestDue).as("%s released %d us before it was due", n, (latestDue - r.at()) / 1000).isGreaterThanOrEqualTo(0);
                        order.add(n);
                    }
                }
            }
            assertThat(order).containsExactly("m0", "m1", "m2", "m3", "m4");
        } finally {
            lane.stop();
        }
    }

    /**
     * What is due when the lane's thread comes back leaves in one go (one wake-up), as runs of one kind
     * (multicast, unicast) in order, each as one delivery.
     */
    @Test void everythingDueLeavesInOneWakeUpAsRunsOfOneKind() throws Exception {
        CountDownLatch firstIn = new CountDownLatch(1), release = new CountDownLatch(1);
        List<Run> runs = Collections.synchronizedList(new ArrayList<>());
        DelayLane lane = new DelayLane("test-lane", (run, mc) -> {
            runs.add(new Run(names(run), mc, System.nanoTime()));
            if (firstIn.getCount() > 0) {
                firstIn.countDown();
                try { release.await(); } catch (InterruptedException e) { Thread.currentThread().interrupt(); }
            }
        }, () -> {});
        try {
            long now = System.nanoTime();
            lane.add(msg("first"), now, true);
            assertThat(firstIn.await(5, TimeUnit.SECONDS)).isTrue();   // the lane's thread is busy passing "first" up
            Message[] batch = {msg("a"), msg("b")};
            lane.add(batch, new long[]{now, now}, 2, true);
            lane.add(msg("c"), now, false);
            lane.add(msg("d"), now, false);
            lane.add(msg("e"), now, true);
            lane.add(msg("later"), System.nanoTime() + ms(50), true);
            release.countDown();
            awaitCount(runs, 7);
            synchronized (runs) {
                assertThat(runs).extracting(Run::names).containsExactly(
                        List.of("first"), List.of("a", "b"), List.of("c", "d"), List.of("e"), List.of("later"));
                assertThat(runs).extracting(Run::multicast).containsExactly(true, true, false, true, true);
                // a, b, c, d, e went up back to back; "later" waited for its own due time
                assertThat(runs.get(3).at() - runs.get(1).at()).isLessThan(ms(25));
                assertThat(runs.get(4).at() - now).isGreaterThanOrEqualTo(ms(50));
            }
        } finally {
            lane.stop();
        }
    }

    /**
     * A message due on arrival goes up on the caller's thread only while nothing of its link is held or on its way up:
     * not while the lane holds one, not while the lane's thread passes one up; and what is queued during such a pass
     * waits for it to end.
     */
    @Test void aDirectPassNeverOvertakesTheLane() throws Exception {
        CountDownLatch inSink = new CountDownLatch(1), release = new CountDownLatch(1);
        List<Run> runs = Collections.synchronizedList(new ArrayList<>());
        DelayLane lane = new DelayLane("test-lane", (run, mc) -> {
            runs.add(new Run(names(run), mc, System.nanoTime()));
            if (run.get(0).getObject().equals("held")) {
                inSink.countDown();
                try { release.await(); } catch (InterruptedException e) { Thread.currentThread().interrupt(); }
            }
        }, () -> {});
        try {
            List<String> direct = new ArrayList<>();
            assertThat(lane.passIfIdle(() -> direct.add("first"))).isTrue();                  // empty and idle: on this thread
            assertThat(direct).containsExactly("first");
            lane.add(msg("held"), System.nanoTime() + ms(30), true);
            assertThat(lane.passIfIdle(() -> direct.add("overtaking"))).as("the lane holds one").isFalse();
            assertThat(inSink.await(5, TimeUnit.SECONDS)).isTrue();                             // now the lane's thread passes it up
            assertThat(lane.passIfIdle(() -> direct.add("overtaking"))).as("the lane passes one up").isFalse();
            release.countDown();
            awaitCount(runs, 1);
            for (long end = System.nanoTime() + ms(5_000); !lane.passIfIdle(() -> direct.add("after")) && System.nanoTime() < end; ) Thread.sleep(1);
            assertThat(direct).containsExactly("first", "after");
            // queued while a direct pass runs: goes up once it ended, not before
            CountDownLatch passing = new CountDownLatch(1), endPass = new CountDownLatch(1);
            Thread t = Thread.ofPlatform().start(() -> lane.passIfIdle(() -> {
                passing.countDown();
                try { endPass.await(); } catch (InterruptedException e) { Thread.currentThread().interrupt(); }
                runs.add(new Run(List.of("direct"), true, System.nanoTime()));
            }));
            assertThat(passing.await(5, TimeUnit.SECONDS)).isTrue();
            lane.add(msg("queued"), System.nanoTime(), true);
            Thread.sleep(30);
            synchronized (runs) { assertThat(runs).extracting(Run::names).containsExactly(List.of("held")); }
            endPass.countDown();
            t.join(5_000);
            awaitCount(runs, 3);
            synchronized (runs) { assertThat(runs).extracting(Run::names).containsExactly(List.of("held"), List.of("direct"), List.of("queued")); }
        } finally {
            release.countDown();
            lane.stop();
        }
    }

    /** An idle lane ends its thread, tells its owner, and takes nothing more (the owner makes a new one). */
    @Test void anIdleLaneRetires() throws Exception {
        AtomicBoolean retired = new AtomicBoolean();
        DelayLane lane = new DelayLane("test-lane", (run, mc) -> {}, () -> retired.set(true), ms(50));
        lane.add(msg("x"), System.nanoTime(), true);
        lane.thread().join(5_000);
        assertThat(lane.thread().isAlive()).isFalse();
        assertThat(retired).isTrue();
        assertThat(lane.add(msg("y"), System.nanoTime(), true)).isFalse();
    }

    private static List<String> names(List<Message> run) {
        List<String> out = new ArrayList<>();
        for (Message m : run) out.add(m.getObject());
        return out;
    }

    private static void awaitCount(List<Run> runs, int messages) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (System.nanoTime() < end) {
            int n;
            synchronized (runs) { n = runs.stream().mapToInt(r -> r.names().size()).sum(); }
            if (n >= messages) return;
            Thread.sleep(1);
        }
        throw new AssertionError("only " + runs + " after 5 s");
    }
}
