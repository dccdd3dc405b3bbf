package org.wanrep.gcs.sim;

import org.junit.jupiter.api.Test;
import org.wanrep.gcs.Delivery;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link org.wanrep.gcs.core.TotalOrderCore#uniformGsn()}: what a donor may copy. The sequencer delivers its own
 * AGREED messages before anyone else holds them; such a GSN becomes uniform only once a majority holds it, and never
 * if the sequencer is cut off first (a copy of its replica at that GSN would hold a transaction the group never had).
 */
class UniformGsnTest {
    private static Simulator.Node node(Simulator sim, String site) {
        return sim.alive().stream().filter(n -> n.name.startsWith(site + "/")).findFirst().orElseThrow();
    }

    @Test
    void anAgreedDeliveryOfTheSequencerBecomesUniformOnceAMajorityHoldsIt() {
        Simulator sim = new Simulator(11, List.of("s0", "s1", "s2"), "s0");
        sim.runUntil(2_000);
        Simulator.Node s0 = node(sim, "s0");
        sim.send(s0.name, Delivery.AGREED, new byte[] {1});
        long g = s0.core.deliveredGsn();
        assertThat(g).as("the sequencer delivered its own message at once").isPositive();
        assertThat(s0.core.uniformGsn()).as("nobody else holds it yet").isLessThan(g);
        sim.runUntil(sim.now() + 500);
        assertThat(s0.core.uniformGsn()).isEqualTo(g);
        // safe deliveries are uniform when delivered
        sim.send(s0.name, Delivery.SAFE, new byte[] {2});
        sim.runUntil(sim.now() + 500);
        assertThat(s0.core.uniformGsn()).isEqualTo(s0.core.deliveredGsn()).isGreaterThan(g);
    }

    @Test
    void neverIfTheSequencerIsCutOffBeforeAnyoneHeldIt() {
        Simulator sim = new Simulator(12, List.of("s0", "s1", "s2"), "s0");
        sim.runUntil(2_000);
        Simulator.Node s0 = node(sim, "s0");
        long before = s0.core.uniformGsn();
        sim.dropLink(s0.name, node(sim, "s1").name);
        sim.dropLink(s0.name, node(sim, "s2").name);
        sim.send(s0.name, Delivery.AGREED, new byte[] {1});
        long g = s0.core.deliveredGsn();
        assertThat(g).isGreaterThan(before);
        sim.runUntil(sim.now() + 20_000);   // the others exclude s0 and go on without its message
        assertThat(s0.core.uniformGsn()).as("its lone delivery never became the group's").isLessThan(g);
    }
}
