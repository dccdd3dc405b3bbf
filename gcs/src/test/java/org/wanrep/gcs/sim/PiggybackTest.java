package org.wanrep.gcs.sim;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.wanrep.gcs.Delivery;
import org.wanrep.gcs.GcsListener;
import org.wanrep.gcs.GcsMessage;
import org.wanrep.gcs.Members;
import org.wanrep.gcs.MsgId;
import org.wanrep.gcs.core.CoreConfig;
import org.wanrep.gcs.core.Proto;
import org.wanrep.gcs.wan.DeliveryBound;
import org.wanrep.gcs.wan.LatencyMatrix;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Piggybacked stability with fixed link delays: DATA and ORDER carry their sender's heldThrough, so a member
 * that holds a SAFE slot delivers it as soon as it knows a majority holds it, without waiting for a paced ACK.
 * With three members and the sequencer a, b and c deliver when the ORDER arrives (its sender holds the slot),
 * and a one hop after the first other member holds it: exactly {@link DeliveryBound#safe}.
 */
class PiggybackTest {
    /** Symmetric one-way delays (ms), sequencer a first. */
    private static final LatencyMatrix THREE = LatencyMatrix.parse("""
            site,a,b,c
            a,0,10,7
            b,10,0,5
            c,7,5,0
            """, "three");
    private static final LatencyMatrix FIVE = LatencyMatrix.parse("""
            site,a,b,c,d,e
            a,0,10,7,15,20
            b,10,0,5,8,12
            c,7,5,0,6,9
            d,15,8,6,0,4
            e,20,12,9,4,0
            """, "five");

    /** A world on these delays; heartbeats far apart, so that nothing but the test's traffic is on the wire. */
    private static Simulator world(LatencyMatrix m, long ackIntervalMs, boolean bundle, Map<String, Map<MsgId, Long>> finalAt) {
        Simulator sim = new Simulator(3, new CoreConfig(m.sites(), m.sites().get(0), ackIntervalMs, 64, true, 60_000, 120_000));
        sim.bundleSteps(bundle);
        sim.linkDelays((from, to) -> (long) m.delay(Members.siteOf(from), Members.siteOf(to)));
        for (String site : m.sites()) {
            String member = Members.name(site, "1");
            Map<MsgId, Long> at = new HashMap<>();
            finalAt.put(site, at);
            sim.listen(member, new GcsListener() {
                @Override public void ordered(GcsMessage msg, long gsn) { at.put(msg.id(), sim.now()); }
            });
        }
        sim.runUntil(1000);
        for (String site : m.sites()) assertThat(sim.isPrimary(Members.name(site, "1"))).as(site).isTrue();
        return sim;
    }

    private static long bound(LatencyMatrix m, String sender, String receiver) {
        double b = new DeliveryBound(m, m.sites().get(0)).safe(m.indexOf(sender), m.indexOf(receiver));
        return Math.round(b);
    }

    @ParameterizedTest(name = "bundled steps: {0}")
    @ValueSource(booleans = {true, false})
    void threeMembersDeliverWhenTheOrderArrivesAndTheSequencerOneHopAfterTheFirstHolder(boolean bundle) {
        Map<String, Map<MsgId, Long>> at = new HashMap<>();
        // ACKs paced 50 ms apart: whatever waits for an ACK shows
        Simulator sim = world(THREE, 50, bundle, at);
        int acksA = sim.sent("a/1", Proto.Ack.class);
        long t0 = sim.now();
        MsgId m1 = sim.send("b/1", Delivery.SAFE, new byte[]{1});
        sim.runUntil(t0 + 1);
        MsgId m2 = sim.send("b/1", Delivery.SAFE, new byte[]{2});
        sim.runUntil(t0 + 500);
        // m1: b when a's ORDER arrives (10 + 10), c when it arrives there (10 + 7); a once c's ACK came back (17 + 7)
        assertThat(at.get("b").get(m1)).isEqualTo(t0 + 20).isEqualTo(t0 + bound(THREE, "b", "b"));
        assertThat(at.get("c").get(m1)).isEqualTo(t0 + 17).isEqualTo(t0 + bound(THREE, "b", "c"));
        assertThat(at.get("a").get(m1)).isEqualTo(t0 + 24).isEqualTo(t0 + bound(THREE, "b", "a"));
        // m2, 1 ms later: a's ACK for it would be paced until 50 ms after its first, but b and c need none
        assertThat(at.get("b").get(m2)).isEqualTo(t0 + 1 + 20);
        assertThat(at.get("c").get(m2)).isEqualTo(t0 + 1 + 17);
        // the sequencer waits for a holder's ACK, and theirs are paced now
        assertThat(at.get("a").get(m2)).isGreaterThanOrEqualTo(t0 + 1 + bound(THREE, "b", "a"));
        // a sent nothing but its two ORDERs: they told what it holds, so no ACK was due
        assertThat(sim.sent("a/1", Proto.Ack.class)).isEqualTo(acksA);
    }

    @ParameterizedTest(name = "bundled steps: {0}")
    @ValueSource(booleans = {true, false})
    void theSequencersOwnMessageIsDeliveredWhenItsDataAndOrderArrive(boolean bundle) {
        Map<String, Map<MsgId, Long>> at = new HashMap<>();
        Simulator sim = world(THREE, 1, bundle, at);
        long t0 = sim.now();
        MsgId m = sim.send("a/1", Delivery.SAFE, new byte[]{1});
        sim.runUntil(t0 + 500);
        assertThat(at.get("b").get(m)).isEqualTo(t0 + 10).isEqualTo(t0 + bound(THREE, "a", "b"));
        assertThat(at.get("c").get(m)).isEqualTo(t0 + 7).isEqualTo(t0 + bound(THREE, "a", "c"));
        assertThat(at.get("a").get(m)).isEqualTo(t0 + 14).isEqualTo(t0 + bound(THREE, "a", "a"));
    }

    /** Five members: the sequencer's ORDER and a member's own hold are two of the three a majority needs. */
    @ParameterizedTest(name = "bundled steps: {0}")
    @ValueSource(booleans = {true, false})
    void fiveMembersStillWaitForAMajoritysHolds(boolean bundle) {
        Map<String, Map<MsgId, Long>> at = new HashMap<>();
        Simulator sim = world(FIVE, 1, bundle, at);
        for (String sender : List.of("b", "a", "e")) {
            long t0 = sim.now();
            MsgId m = sim.send(Members.name(sender, "1"), Delivery.SAFE, new byte[]{1});
            sim.runUntil(t0 + 500);
            int s = FIVE.indexOf(sender);
            DeliveryBound b = new DeliveryBound(FIVE, "a");
            for (String r : FIVE.sites())
                assertThat(at.get(r).get(m)).as("%s's message at %s", sender, r).isEqualTo(t0 + bound(FIVE, sender, r));
            if (sender.equals("b")) {
                // b and c hold it and know a does when a's ORDER arrives (20 and 17 ms), and wait for a third
                // member's hold: c's ACK at b (17 + 5), b's at c (20 + 5)
                for (String r : List.of("b", "c")) assertThat(at.get(r).get(m) - t0).as(r).isGreaterThan(Math.round(b.agreed(s, FIVE.indexOf(r))));
                assertThat(at.get("b").get(m)).isEqualTo(t0 + 22);
                assertThat(at.get("c").get(m)).isEqualTo(t0 + 25);
            }
        }
    }

    /**
     * The sequencer's ORDERs tell what it holds: it sends no ACK while it orders a steady stream (only the
     * heartbeat), and b, whose DATA tells what it held when it sent it, only those its DATA did not cover.
     */
    @Test
    void theSequencerSendsNoAckWhileItsOrdersTellWhatItHolds() {
        Simulator sim = new Simulator(4, new CoreConfig(List.of("a", "b", "c"), "a", 2, 64, true, 400, 4000));
        sim.runUntil(1000);
        int acksA = sim.sent("a/1", Proto.Ack.class), ordersA = sim.sent("a/1", Proto.Order.class);
        int acksC = sim.sent("c/1", Proto.Ack.class);
        for (int i = 0; i < 100; i++) {
            sim.send(i % 2 == 0 ? "b/1" : "c/1", i % 3 == 0 ? Delivery.AGREED : Delivery.SAFE, new byte[]{(byte) i});
            sim.runUntil(sim.now() + 10);
        }
        sim.runUntil(sim.now() + 200);
        assertThat(sim.checker.members.get("a/1").ordered).hasSize(100);
        assertThat(sim.sent("a/1", Proto.Order.class) - ordersA).isGreaterThanOrEqualTo(50);
        // 1.2 s at one heartbeat per 400 ms
        assertThat(sim.sent("a/1", Proto.Ack.class) - acksA).as("a's ACKs").isLessThanOrEqualTo(4);
        assertThat(sim.sent("c/1", Proto.Ack.class) - acksC).as("c's ACKs").isLessThan(100);
        sim.checker.checkEnd(List.of("a/1", "b/1", "c/1"));
    }
}
