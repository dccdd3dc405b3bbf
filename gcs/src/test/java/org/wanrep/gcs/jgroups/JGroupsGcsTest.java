package org.wanrep.gcs.jgroups;

import org.jgroups.Address;
import org.jgroups.protocols.DISCARD;
import org.junit.jupiter.api.Test;
import org.wanrep.gcs.Delivery;
import org.wanrep.gcs.MsgId;
import org.wanrep.gcs.NotPrimaryException;
import org.wanrep.gcs.wan.LatencyMatrix;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The total-order protocol over real JGroups stacks (TCP on loopback). */
class JGroupsGcsTest {
    private static final List<String> FOUR = List.of("a", "b", "c", "d");

    private static void sendConcurrently(TestGroup g, List<String> senders, int perSender, Delivery[] modes, long seed,
                                         List<MsgId> sentOut) throws InterruptedException {
        CountDownLatch done = new CountDownLatch(senders.size());
        AtomicReference<Throwable> failure = new AtomicReference<>();
        for (String s : senders) {
            Thread.ofPlatform().start(() -> {
                Random r = new Random(seed + s.hashCode());
                try {
                    for (int i = 0; i < perSender; i++) {
                        MsgId id = g.member(s).multicast(new byte[16 + r.nextInt(2000)], modes[r.nextInt(modes.length)]);
                        synchronized (sentOut) { sentOut.add(id); }
                        if (r.nextInt(10) == 0) Thread.sleep(1);
                    }
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                } finally {
                    done.countDown();
                }
            });
        }
        done.await();
        if (failure.get() != null) throw new AssertionError(failure.get());
    }

    @Test
    void allModesGiveOneSequenceEverywhere() throws Exception {
        try (TestGroup g = new TestGroup(FOUR, null).start(null)) {
            List<MsgId> sent = new ArrayList<>();
            Delivery[] ordered = {Delivery.AGREED, Delivery.SAFE, Delivery.OPT_SAFE};
            sendConcurrently(g, FOUR, 300, ordered, 1, sent);
            g.awaitOrdered(FOUR, sent.size(), Duration.ofSeconds(30));
            g.checkSurvivors(FOUR);
            assertThat(g.recorders.get("a").ordered).containsExactlyInAnyOrderElementsOf(sent);
            // optimistic delivery happened for every OPT_SAFE message, on arrival
            long opts = g.recorders.get("c").opt.size();
            assertThat(opts).isGreaterThan(0);
        }
    }

    @Test
    void reliableMessagesReachEveryMemberInFifoOrder() throws Exception {
        try (TestGroup g = new TestGroup(List.of("a", "b", "c"), null).start(null)) {
            List<MsgId> sent = new ArrayList<>();
            sendConcurrently(g, List.of("a", "b", "c"), 200, new Delivery[]{Delivery.RELIABLE}, 2, sent);
            long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (System.nanoTime() < end && g.recorders.values().stream().anyMatch(r -> r.reliable.size() < sent.size())) Thread.sleep(10);
            for (TestGroup.Recorder r : g.recorders.values()) assertThat(r.reliable).containsExactlyInAnyOrderElementsOf(sent);
        }
    }

    /** The WAN delay protocol: a message from montreal reaches berkeley no sooner than 38 ms (na4). */
    @Test
    void wanDelayFollowsTheLatencyMatrix() throws Exception {
        LatencyMatrix na4 = LatencyMatrix.load("na4");
        try (TestGroup g = new TestGroup(na4.sites(), na4).start(null)) {
            for (int i = 0; i < 5; i++) g.member("montreal").multicast(new byte[8], Delivery.OPT_SAFE);   // warm connections
            g.awaitOrdered(na4.sites(), 5, Duration.ofSeconds(20));
            List<Long> lat = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                long t0 = System.nanoTime();
                MsgId id = g.member("montreal").multicast(new byte[8], Delivery.OPT_SAFE);
                while (!g.recorders.get("berkeley").optAt.containsKey(id)) Thread.sleep(1);
                lat.add((g.recorders.get("berkeley").optAt.get(id) - t0) / 1_000_000);
            }
            lat.sort(null);
            assertThat(lat.get(0)).as("fastest montreal->berkeley optimistic delivery (ms)").isGreaterThanOrEqualTo(38);
            assertThat(lat.get(5)).as("median montreal->berkeley optimistic delivery (ms)").isLessThan(38 + 30);
        }
    }

    /** Crash of the sequencer (abrupt, no LEAVE) while every member sends: survivors agree and lose nothing of theirs. */
    @Test
    void sequencerCrashMidStream() throws Exception {
        try (TestGroup g = new TestGroup(FOUR, null).start(null)) {
            assertThat(g.member("b").view().sequencer()).startsWith("a/");
            List<MsgId> sent = new ArrayList<>();
            Thread load = Thread.ofPlatform().start(() -> {
                try {
                    sendConcurrently(g, List.of("b", "c", "d"), 400, new Delivery[]{Delivery.AGREED, Delivery.SAFE, Delivery.OPT_SAFE}, 3, sent);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            sendConcurrently(g, List.of("a"), 100, new Delivery[]{Delivery.SAFE, Delivery.AGREED}, 4, new ArrayList<>());
            Thread.sleep(30);
            g.crash("a");
            load.join();
            List<String> survivors = List.of("b", "c", "d");
            g.awaitView(survivors, v -> v.primary() && v.members().stream().noneMatch(m -> m.startsWith("a/")), Duration.ofSeconds(60));
            List<MsgId> mine;
            synchronized (sent) { mine = List.copyOf(sent); }
            g.awaitOrdered(survivors, 0, Duration.ofSeconds(1));
            g.awaitAgreement(survivors, Duration.ofSeconds(30));
            g.checkSurvivors(survivors);
            assertThat(g.recorders.get("b").ordered).containsAll(mine);
            assertThat(g.member("b").view().sequencer()).startsWith("b/");
        }
    }

    /**
     * FACTS.md's SEQUENCER failure: view {A,B,D}, sequencer A, D drops all of A's traffic (DISCARD),
     * A multicasts and B delivers, then A crashes. With JGroups' SEQUENCER, D never gets those
     * messages; here the flush must hand them to D.
     */
    @Test
    void sequencerCrashWhileOneMemberMissesItsTraffic() throws Exception {
        List<String> sites = List.of("a", "b", "d");
        ConcurrentHashMap<String, DISCARD> discards = new ConcurrentHashMap<>();
        try (TestGroup g = new TestGroup(sites, null).start(TestGroup.discardAboveTransport(discards))) {
            Address a = g.member("a").channel().getAddress();
            discards.get("d").addIgnoreMember(a);
            for (int i = 0; i < 20; i++) g.member("a").multicast(new byte[]{(byte) i}, Delivery.AGREED);
            g.awaitOrdered(List.of("a", "b"), 20, Duration.ofSeconds(10));
            assertThat(g.recorders.get("d").ordered).isEmpty();
            g.crash("a");
            g.awaitOrdered(List.of("d"), 20, Duration.ofSeconds(30));
            g.checkSurvivors(List.of("b", "d"));
            assertThat(g.recorders.get("d").ordered).containsExactlyElementsOf(g.recorders.get("b").ordered);
        }
    }

    @Test
    void minorityFailsOrderedMulticastsWithAClearError() throws Exception {
        try (TestGroup g = new TestGroup(List.of("a", "b", "c"), null).start(null)) {
            g.crash("b");
            g.crash("c");
            g.awaitView(List.of("a"), v -> !v.primary(), Duration.ofSeconds(60));
            assertThatThrownBy(() -> g.member("a").multicast(new byte[4], Delivery.SAFE))
                    .isInstanceOf(NotPrimaryException.class)
                    .hasMessageContaining("not in the primary component").hasMessageContaining("1 of 3");
            assertThat(g.member("a").view().members()).hasSize(1);
        }
    }
}
