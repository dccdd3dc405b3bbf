package org.wanrep.gcs.jgroups;

import org.jgroups.protocols.DISCARD;
import org.junit.jupiter.api.Test;
import org.wanrep.gcs.Delivery;
import org.wanrep.gcs.MsgId;
import org.wanrep.gcs.NotPrimaryException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Seeded random faults over real JGroups stacks: message loss with DISCARD (repaired by NAKACK2
 * and UNICAST3), concurrent senders in every mode, and an abrupt crash of the sequencer or of
 * another member mid-stream. After each run: survivors deliver identical gap-free sequences, with
 * no duplicates, every optimistic delivery made final, and every message a survivor sent.
 * Replay with {@code -Dwanrep.fault.seed=SEED}.
 */
class JGroupsFaultTest {
    private static final List<String> SITES = List.of("a", "b", "c", "d");

    @Test
    void randomLossAndCrashesKeepSurvivorsInAgreement() throws Exception {
        long seed = Long.getLong("wanrep.fault.seed", new Random().nextLong());
        int runs = Integer.getInteger("wanrep.fault.runs", 3);
        long budget = Long.getLong("wanrep.fault.budgetMs", 120_000);
        System.out.println("JGroups fault test seed " + seed);
        long start = System.currentTimeMillis();
        for (int i = 0; i < runs && System.currentTimeMillis() - start < budget; i++) {
            long s = seed + i;
            try {
                run(s);
            } catch (Throwable t) {
                throw new AssertionError("JGroups fault run failed, seed " + s + " (-Dwanrep.fault.seed=" + s + " -Dwanrep.fault.runs=1): " + t.getMessage(), t);
            }
        }
    }

    private void run(long seed) throws Exception {
        Random r = new Random(seed);
        Map<String, DISCARD> discards = new ConcurrentHashMap<>();
        try (TestGroup g = new TestGroup(SITES, null).start(TestGroup.discardAboveTransport(discards))) {
            // loss at one or two members
            for (int i = 0; i < 1 + r.nextInt(2); i++) discards.get(SITES.get(r.nextInt(SITES.size()))).setUpDiscardRate(0.01 + r.nextDouble() * 0.04);
            String victim = r.nextBoolean() ? "a" : SITES.get(1 + r.nextInt(SITES.size() - 1));   // "a" is the sequencer
            Map<String, List<MsgId>> sent = new ConcurrentHashMap<>();
            AtomicBoolean stop = new AtomicBoolean();
            List<Thread> senders = new ArrayList<>();
            Delivery[] modes = Delivery.values();
            for (String s : SITES) {
                List<MsgId> mine = Collections.synchronizedList(new ArrayList<>());
                sent.put(s, mine);
                long sseed = r.nextLong();
                senders.add(Thread.ofPlatform().start(() -> {
                    Random sr = new Random(sseed);
                    while (!stop.get() && !g.member(s).channel().isClosed()) {
                        try {
                            mine.add(g.member(s).multicast(new byte[8 + sr.nextInt(3000)], modes[sr.nextInt(modes.length)]));
                            Thread.sleep(sr.nextInt(3));
                        } catch (NotPrimaryException | IllegalStateException e) {
                            return;
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                }));
            }
            Thread.sleep(300 + r.nextInt(1200));
            g.crash(victim);
            Thread.sleep(300 + r.nextInt(700));
            stop.set(true);
            for (Thread t : senders) t.join();
            for (DISCARD d : discards.values()) d.setUpDiscardRate(0);
            List<String> survivors = new ArrayList<>(SITES);
            survivors.remove(victim);
            g.awaitView(survivors, v -> v.primary() && v.members().stream().noneMatch(m -> m.startsWith(victim + "/")), Duration.ofSeconds(60));
            g.awaitAgreement(survivors, Duration.ofSeconds(60));
            g.checkSurvivors(survivors);
            for (String s : survivors) {
                TestGroup.Recorder rec = g.recorders.get(s);
                for (MsgId id : List.copyOf(sent.get(s))) {
                    boolean ordered = g.recorders.get(survivors.get(0)).ordered.contains(id);
                    boolean reliable = g.recorders.get(survivors.get(0)).reliable.contains(id);
                    assertThat(ordered || reliable || rec.undeliverable.contains(id))
                            .as("seed %d: %s sent %s; never delivered at %s nor declared undeliverable%s", seed, s, id, survivors.get(0), g.states(survivors))
                            .isTrue();
                }
            }
            System.out.printf("fault run seed %d: victim %s, %d ordered deliveries agreed by %s%n", seed, victim,
                    g.recorders.get(survivors.get(0)).ordered.size(), survivors);
        }
    }
}
