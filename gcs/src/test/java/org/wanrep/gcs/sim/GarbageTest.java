package org.wanrep.gcs.sim;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.wanrep.gcs.Delivery;

import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a member keeps: every message, ordered or RELIABLE, is dropped once every member holds (or received) it, also
 * after a flush carried some of it into a new epoch; and what a paused member makes the others keep is given up
 * when it is back. Random traffic from every member; the seed is printed.
 */
class GarbageTest {
    private static final List<Delivery> KINDS = List.of(Delivery.RELIABLE, Delivery.AGREED, Delivery.SAFE, Delivery.OPT_SAFE);

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {3, 17, 41})
    void everyMessageIsDroppedOnceEveryMemberHasIt(long seed) {
        System.out.println("GarbageTest seed " + seed);
        Simulator sim = new Simulator(seed, List.of("a", "b", "c"), "a");
        Random rnd = new Random(seed);
        sim.runUntil(1_000);
        traffic(sim, rnd, 300);
        sim.runUntil(sim.now() + 2_000);
        for (Simulator.Node n : sim.alive()) assertThat(n.core.heldCount()).as(n.name + " after traffic").isZero();

        // c cut off: a and b go on without it, keep nothing of c's epoch beyond the flush and drop again
        sim.partition(java.util.Map.of("c/1", 1));
        traffic(sim, rnd, 200);
        sim.runUntil(sim.now() + 1_000);
        sim.heal();
        traffic(sim, rnd, 200);
        sim.runUntil(sim.now() + 5_000);
        for (Simulator.Node n : sim.alive()) {
            if (!n.core.isPrimary()) continue;
            assertThat(n.core.heldCount()).as(n.name + " after the cut and the heal").isZero();
        }
        sim.checkEnd(sim.aliveMembers());
    }

    private static void traffic(Simulator sim, Random rnd, int messages) {
        List<String> members = sim.aliveMembers();
        for (int i = 0; i < messages; i++) {
            String from = members.get(rnd.nextInt(members.size()));
            if (sim.isPrimary(from)) sim.multicast(from, KINDS.get(rnd.nextInt(KINDS.size())), new byte[]{(byte) i});
            sim.runUntil(sim.now() + rnd.nextInt(4));
        }
    }
}
