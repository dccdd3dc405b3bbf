package org.wanrep.gcs.sim;

import org.junit.jupiter.api.Test;
import org.wanrep.gcs.core.CoreConfig;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The read lease of {@link org.wanrep.gcs.core.TotalOrderCore#leaseExpiry()}: held by every member
 * while all of them hear each other, lost by a member that stops hearing the others (and by those that
 * stop hearing its echoes) within the lease, and back for the members of the next primary view.
 */
class LeaseTest {
    private static final long LEASE = CoreConfig.DEFAULT_LEASE_MS, BEAT = CoreConfig.DEFAULT_HEARTBEAT_MS;

    private static Simulator.Node node(Simulator sim, String site) {
        return sim.alive().stream().filter(n -> n.name.startsWith(site + "/")).findFirst().orElseThrow();
    }

    private static boolean current(Simulator sim, String site) {
        return node(sim, site).core.leaseExpiry() > sim.now;
    }

    @Test
    void heldWhileEveryoneHearsEveryone() {
        Simulator sim = new Simulator(1, List.of("s0", "s1", "s2"), null);
        sim.runUntil(2 * BEAT + 200);
        for (String s : List.of("s0", "s1", "s2")) assertThat(current(sim, s)).as(s).isTrue();
        sim.runUntil(10 * LEASE);   // no traffic at all: the heartbeats keep it
        for (String s : List.of("s0", "s1", "s2")) assertThat(current(sim, s)).as(s).isTrue();
    }

    @Test
    void lostWithinTheLeaseWhenCutOffThenBackInTheNextPrimaryView() {
        Simulator sim = new Simulator(2, List.of("s0", "s1", "s2"), null);
        sim.runUntil(2_000);
        String s2 = node(sim, "s2").name;
        // s2 stops hearing the others, with no view change yet (as a pause or a one-way cut looks at first)
        sim.dropLink(node(sim, "s0").name, s2);
        sim.dropLink(node(sim, "s1").name, s2);
        long cut = sim.now;
        sim.runUntil(cut + LEASE + BEAT + sim.maxDelayMs + 10);
        assertThat(current(sim, "s2")).as("the cut-off member").isFalse();
        // the others no longer get fresh echoes from s2: any of them could be excluded by it for all they know
        assertThat(current(sim, "s0")).isFalse();
        assertThat(current(sim, "s1")).isFalse();
        // the membership service excludes s2: the majority's new primary view gives them the lease again
        sim.partition(Map.of(s2, 1));
        sim.runUntil(sim.now + 2 * BEAT + 500);
        assertThat(current(sim, "s0")).isTrue();
        assertThat(current(sim, "s1")).isTrue();
        assertThat(current(sim, "s2")).as("the minority").isFalse();
    }
}
