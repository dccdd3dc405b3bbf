package org.wanrep.txn.sim;

import org.wanrep.txn.ReorderingListener;
import ch.qos.logback.classic.Level;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.slf4j.LoggerFactory;
import org.wanrep.gcs.Delivery;

import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * N replication engines over in-memory replicas, driven deterministically by gcs's simulator with
 * seeded faults (crashes of any member, the sequencer's included; partitions; restarts; transient
 * refusals; deterministic refusals at execution and at COMMIT; the connection lost during COMMIT),
 * checked by {@link EngineChecker}. A failure prints its seed; rerun one with
 * {@code -Dwanrep.enginesim.seed=SEED -Dwanrep.enginesim.runs=1} (and {@code -Dwanrep.enginesim.log=true}
 * for the engine's log).
 */
class EngineSimulationTest {
    private static final long AGREED_SEED = 20261124L;

    /**
     * Seeds that found gcs defects, kept as regressions: 404 (agreed: a plan that never committed outranked
     * the slot a cut-off sequencer had delivered, so it got its message again) and 8886323965292197472 (safe:
     * the checker expected progress where the survivors cannot know whether a plan accepted with two
     * crashed members was installed, so they rightly wait); and 2062040241439167180, an engine defect (agreed,
     * local-copy: the sequencer, cut off, committed two deliveries alone; restarted, its write-set replica had no
     * recorded position and the primary component had ordered nothing since, so it served them: now it stops).
     */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.CsvSource({"AGREED,404", "SAFE,8886323965292197472", "AGREED,2062040241439167180"})
    void formerFailures(Delivery delivery, long seed) {
        if (!Boolean.getBoolean("wanrep.enginesim.log"))
            ((ch.qos.logback.classic.Logger) LoggerFactory.getLogger("org.wanrep")).setLevel(Level.OFF);
        EngineWorld w = new EngineWorld(seed, delivery);
        w.run();
    }

    @ParameterizedTest
    @EnumSource(value = Delivery.class, names = {"AGREED", "SAFE", "OPT_SAFE"})
    void randomizedRuns(Delivery delivery) {
        if (!Boolean.getBoolean("wanrep.enginesim.log"))
            ((ch.qos.logback.classic.Logger) LoggerFactory.getLogger("org.wanrep")).setLevel(Level.OFF);
        // Every mode starts from a fixed seed by default so that CI is reproducible; -Dwanrep.enginesim.random=true
        // explores a new range each time (4000 runs per mode found nothing after the two fixes below).
        long fixed = delivery == Delivery.AGREED ? AGREED_SEED : delivery == Delivery.SAFE ? AGREED_SEED + 1_000_000 : AGREED_SEED + 2_000_000;
        long base = Long.getLong("wanrep.enginesim.seed", Boolean.getBoolean("wanrep.enginesim.random") ? new Random().nextLong() : fixed);
        int runs = Integer.getInteger("wanrep.enginesim.runs", 500);
        System.out.println(delivery.label() + ": engine simulation base seed " + base + " (" + runs + " runs)");
        long start = System.currentTimeMillis();
        int checked = 0, acknowledged = 0, stopped = 0, reordered = 0;
        for (int i = 0; i < runs; i++) {
            long seed = base + i;
            EngineWorld w = new EngineWorld(seed, delivery);
            try {
                w.run();
            } catch (Throwable t) {
                System.out.println("seed " + seed + ", " + delivery.label() + ", " + w.policy + ":\n  " + String.join("\n  ", w.notes));
                throw new AssertionError(delivery.label() + " simulation failed with seed " + seed + " (rerun: -Dwanrep.enginesim.seed=" + seed
                        + " -Dwanrep.enginesim.runs=1 -Dtest=EngineSimulationTest): " + t.getMessage(), t);
            }
            if (w.checker.progressChecked) checked++;
            acknowledged += w.checker.acknowledged.size();
            for (EngineWorld.SiteNode n : w.nodes.values()) if (n.stopped) stopped++;
            for (ReorderingListener l : w.reorderings) reordered += l.reordered;
        }
        System.out.println(delivery.label() + ": " + runs + " runs (" + checked + " ended with a primary component), " + acknowledged
                + " acknowledged transactions, " + stopped + " sites stopped, " + reordered + " shuffled optimistic batches, in " + (System.currentTimeMillis() - start) + " ms");
        assertThat(acknowledged).isGreaterThan(0);
        if (runs >= 20) assertThat(checked).isGreaterThan(runs / 2);
    }
}
