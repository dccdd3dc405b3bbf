package org.wanrep.gcs.jgroups;

import org.jgroups.BytesMessage;
import org.jgroups.Message;
import org.jgroups.protocols.FRAG4;
import org.jgroups.stack.Protocol;
import org.jgroups.stack.ProtocolStack;
import org.junit.jupiter.api.Test;
import org.wanrep.gcs.Delivery;
import org.wanrep.gcs.MsgId;
import org.wanrep.gcs.core.Codec;
import org.wanrep.gcs.core.Proto;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The adapter's bundling over real JGroups stacks: what the core queued while the sender thread was busy goes
 * out as one JGroups message, and every member still delivers one total order; the sequencer's own DATA and
 * its ORDER share a message.
 */
class BundlingTest {
    private static final List<String> SITES = List.of("a", "b", "c");

    /**
     * On top of the stack (above FRAG4, so it sees exactly what JGroupsGcs sends): counts the multicast JGroups
     * messages and the total-order messages in them, and can hold the sender thread back.
     */
    static final class Gate extends Protocol {
        volatile CountDownLatch open = new CountDownLatch(0);
        final AtomicLong frames = new AtomicLong(), messages = new AtomicLong();
        final List<Class<?>> types = java.util.Collections.synchronizedList(new ArrayList<>());

        @Override public Object down(Message msg) {
            if (msg.getDest() == null && msg instanceof BytesMessage) {
                try {
                    open.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                List<Proto> ps = Codec.decodeAll(msg.getArray(), msg.getOffset(), msg.getLength());
                frames.incrementAndGet();
                messages.addAndGet(ps.size());
                for (Proto p : ps) types.add(p.getClass());
            }
            return down_prot.down(msg);
        }
    }

    private static TestGroup group(Map<String, Gate> gates) throws Exception {
        return new TestGroup(SITES, null).start((site, ch) -> {
            Gate g = new Gate();
            gates.put(site, g);
            try {
                ch.getProtocolStack().insertProtocol(g, ProtocolStack.Position.ABOVE, FRAG4.class);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
    }

    @Test
    void aBurstGoesOutInFewerJGroupsMessagesAndIsDeliveredInOneOrder() throws Exception {
        Map<String, Gate> gates = new ConcurrentHashMap<>();
        try (TestGroup g = group(gates)) {
            Gate b = gates.get("b");
            JGroupsGcs gb = g.member("b");
            // hold b's sender thread back at its next multicast, so that the burst queues up behind it
            b.open = new CountDownLatch(1);
            long frames0 = b.frames.get(), messages0 = b.messages.get();
            JGroupsGcs.SendStats stats0 = gb.sendStats();
            Random r = new Random(5);
            Delivery[] modes = {Delivery.SAFE, Delivery.AGREED, Delivery.OPT_SAFE, Delivery.RELIABLE};
            List<MsgId> ordered = new ArrayList<>();
            int burst = 300;
            for (int i = 0; i < burst; i++) {
                Delivery d = modes[r.nextInt(modes.length)];
                MsgId id = gb.multicast(new byte[16 + r.nextInt(2000)], d);
                if (d.ordered()) ordered.add(id);
            }
            b.open.countDown();
            g.awaitOrdered(SITES, ordered.size(), Duration.ofSeconds(30));
            g.awaitAgreement(SITES, Duration.ofSeconds(5));
            g.checkSurvivors(SITES);
            assertThat(g.recorders.get("c").ordered).containsExactlyInAnyOrderElementsOf(ordered);
            for (TestGroup.Recorder rec : g.recorders.values()) assertThat(rec.reliable).as(rec.site).hasSize(burst - ordered.size());
            long frames = b.frames.get() - frames0, messages = b.messages.get() - messages0;
            System.out.printf("b sent %d total-order messages in %d JGroups multicasts%n", messages, frames);
            assertThat(messages).as("b's total-order messages").isGreaterThanOrEqualTo(burst);
            // the first DATA went alone (the gate held it), the rest queued behind it: a handful of bundles
            assertThat(frames).as("b's JGroups multicasts").isLessThan(messages / 10);
            // the adapter counts the same
            JGroupsGcs.SendStats stats = gb.sendStats();
            assertThat(stats.messages() - stats0.messages()).isGreaterThanOrEqualTo(messages);
            assertThat(stats.frames() - stats0.frames()).isLessThan((stats.messages() - stats0.messages()) / 10);
        }
    }

    @Test
    void theSequencersDataAndOrderShareOneJGroupsMessage() throws Exception {
        Map<String, Gate> gates = new ConcurrentHashMap<>();
        try (TestGroup g = group(gates)) {
            JGroupsGcs a = g.member("a");
            assertThat(a.view().sequencer()).startsWith("a/");
            Gate gate = gates.get("a");
            long frames0 = gate.frames.get(), messages0 = gate.messages.get();
            int n = 20;
            for (int i = 0; i < n; i++) {
                a.multicast(new byte[]{(byte) i}, Delivery.SAFE);
                g.awaitOrdered(SITES, i + 1, Duration.ofSeconds(10));
            }
            long frames = gate.frames.get() - frames0, messages = gate.messages.get() - messages0;
            // each multicast step queued its DATA and its ORDER together: one JGroups message for both; the
            // ORDERs told what a holds, so a sent no ACK but heartbeats
            assertThat(messages - frames).as("messages saved by bundling (%d in %d)", messages, frames).isGreaterThanOrEqualTo(n);
            g.checkSurvivors(SITES);
        }
    }
}
