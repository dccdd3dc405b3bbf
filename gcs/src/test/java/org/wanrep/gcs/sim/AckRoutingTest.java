package org.wanrep.gcs.sim;

import org.junit.jupiter.api.Test;
import org.wanrep.gcs.Delivery;
import org.wanrep.gcs.core.CoreConfig;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Where ACKs go. In a view of three or fewer only the sequencer waits for others' holds (the others count their own
 * and the sequencer's, which its ORDERs carry), so a paced ACK whose only news is a hold goes to the sequencer alone;
 * heartbeats (the lease's stamps and echoes, stability) and ACKs telling a RELIABLE message received go to every
 * member. With four or more, every member needs a third hold: ACKs go to all.
 */
class AckRoutingTest {
    private static final long HEARTBEAT_MS = 400;

    private static Simulator world(List<String> sites) {
        Simulator sim = new Simulator(11, new CoreConfig(sites, "a", 2, 64, true, HEARTBEAT_MS, 4000));
        sim.runUntil(1000);
        return sim;
    }

    /** b and c send a SAFE message every 10 ms for 1.2 s, then everything settles. */
    private static void traffic(Simulator sim, Delivery d) {
        for (int i = 0; i < 120; i++) {
            sim.send(i % 2 == 0 ? "b/1" : "c/1", d, new byte[]{(byte) i});
            sim.runUntil(sim.now() + 10);
            for (String m : sim.aliveMembers()) assertThat(sim.isCurrent(m)).as("%s holds its lease", m).isTrue();
        }
        sim.runUntil(sim.now() + 2 * HEARTBEAT_MS);
    }

    @Test
    void threeMembersAcknowledgeHoldsToTheSequencerAloneAndHeartbeatToAll() {
        Simulator sim = world(List.of("a", "b", "c"));
        int bAll = sim.acksSent("b/1", Simulator.ALL), cAll = sim.acksSent("c/1", Simulator.ALL);
        int bToA = sim.acksSent("b/1", "a/1"), cToA = sim.acksSent("c/1", "a/1");
        traffic(sim, Delivery.SAFE);
        for (String m : List.of("a/1", "b/1", "c/1")) assertThat(sim.checker.members.get(m).ordered).as(m).hasSize(120);
        // ~2 s at one heartbeat per 400 ms, to all; every hold the sequencer waited for came to it alone
        assertThat(sim.acksSent("b/1", Simulator.ALL) - bAll).as("b's ACKs to all").isBetween(3, 7);
        assertThat(sim.acksSent("c/1", Simulator.ALL) - cAll).as("c's ACKs to all").isBetween(3, 7);
        assertThat(sim.acksSent("b/1", "a/1") - bToA).as("b's ACKs to a").isGreaterThan(30);
        assertThat(sim.acksSent("c/1", "a/1") - cToA).as("c's ACKs to a").isGreaterThan(30);
        assertThat(sim.acksSent("b/1", "c/1") + sim.acksSent("c/1", "b/1")).isZero();
        sim.checker.checkEnd(List.of("a/1", "b/1", "c/1"));
    }

    /**
     * In a view of three the sequencer needs one other hold: the member after it in view order acknowledges at the
     * normal pace, the third {@code SECOND_ACKER_PACING} times slower. When the first stops reaching the sequencer, the
     * sequencer's SAFE deliveries go on with the third's slower ACKs (before any view change).
     */
    @Test
    void theThirdMemberPacesItsHoldAcksSlowerAndCarriesTheSequencerWhenTheFirstIsSilent() {
        Simulator sim = world(List.of("a", "b", "c"));
        int bToA = sim.acksSent("b/1", "a/1"), cToA = sim.acksSent("c/1", "a/1");
        for (int i = 0; i < 200; i++) {   // the sequencer's own SAFE traffic, one every 5 ms: its holds come by ACK only
            sim.send("a/1", Delivery.SAFE, new byte[]{(byte) i});
            sim.runUntil(sim.now() + 5);
        }
        sim.runUntil(sim.now() + 100);
        for (String m : List.of("a/1", "b/1", "c/1")) assertThat(sim.checker.members.get(m).ordered).as(m).hasSize(200);
        int b = sim.acksSent("b/1", "a/1") - bToA, c = sim.acksSent("c/1", "a/1") - cToA;
        assertThat(b).as("b's ACKs to a (paced %d ms)", 2).isGreaterThan(100);
        assertThat(c).as("c's ACKs to a (paced %d ms)", 2 * 10).isBetween(20, 70);
        // b's stream to a stops; a's SAFE deliveries wait for c's slower ACKs only
        sim.dropLink("b/1", "a/1");
        long from = sim.now();
        for (int i = 0; i < 10; i++) {
            sim.send("a/1", Delivery.SAFE, new byte[]{(byte) (100 + i)});
            sim.runUntil(sim.now() + 5);
        }
        sim.runUntil(from + 50 + 2 * 10 * 2 + 20);
        assertThat(sim.checker.members.get("a/1").ordered).as("a's SAFE deliveries with b silent").hasSize(210);
        sim.checker.checkEnd(List.of("a/1", "b/1", "c/1"));
    }

    @Test
    void anAckTellingAReliableMessageReceivedGoesToAll() {
        Simulator sim = world(List.of("a", "b", "c"));
        int cAll = sim.acksSent("c/1", Simulator.ALL);
        traffic(sim, Delivery.RELIABLE);
        for (String m : List.of("a/1", "b/1", "c/1")) assertThat(sim.checker.members.get(m).reliable).as(m).hasSize(120);
        assertThat(sim.acksSent("c/1", Simulator.ALL) - cAll).as("c's ACKs to all").isGreaterThan(30);
        sim.checker.checkEnd(List.of("a/1", "b/1", "c/1"));
    }

    @Test
    void fourMembersAcknowledgeToAll() {
        Simulator sim = world(List.of("a", "b", "c", "d"));
        int bAll = sim.acksSent("b/1", Simulator.ALL);
        traffic(sim, Delivery.SAFE);
        for (String m : List.of("a/1", "b/1", "c/1", "d/1")) assertThat(sim.checker.members.get(m).ordered).as(m).hasSize(120);
        assertThat(sim.acksSent("b/1", Simulator.ALL) - bAll).isGreaterThan(30);
        assertThat(sim.acksSent("b/1", "a/1")).isZero();
        sim.checker.checkEnd(List.of("a/1", "b/1", "c/1", "d/1"));
    }
}
