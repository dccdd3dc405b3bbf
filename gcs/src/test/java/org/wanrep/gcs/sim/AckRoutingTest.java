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
