package org.wanrep.gcs.jgroups;

import org.jgroups.Address;
import org.jgroups.JChannel;
import org.jgroups.Message;
import org.jgroups.ObjectMessage;
import org.jgroups.Receiver;
import org.jgroups.protocols.TCP;
import org.jgroups.stack.Protocol;
import org.jgroups.util.MessageBatch;
import org.jgroups.util.UUID;
import org.junit.jupiter.api.Test;
import org.wanrep.gcs.wan.LatencyMatrix;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;

import static org.assertj.core.api.Assertions.assertThat;

class WanDelayTest {
    /** Records what comes up, with the time and the batch it came in. */
    private static final class Up extends Protocol {
        final List<String> names = new CopyOnWriteArrayList<>();
        final List<Long> at = new CopyOnWriteArrayList<>();
        final List<Integer> batches = new CopyOnWriteArrayList<>();
        volatile CountDownLatch holdRegular;   // while set, a regular message blocks the thread that passes it up

        @Override public Object up(Message msg) { record(msg); return null; }
        @Override public void up(MessageBatch batch) {
            batches.add(batch.size());
            for (Message m : batch) record(m);
        }
        private void record(Message m) {
            names.add(m.getObject());
            at.add(System.nanoTime());
            CountDownLatch h = holdRegular;
            if (h != null && !m.isFlagSet(Message.Flag.OOB)) {
                try { h.await(); } catch (InterruptedException e) { Thread.currentThread().interrupt(); }
            }
        }
        void await(int n) {
            for (long end = System.nanoTime() + 5_000_000_000L; names.size() < n && System.nanoTime() < end; ) Thread.onSpinWait();
            assertThat(names).hasSizeGreaterThanOrEqualTo(n);
        }
    }

    private static final LatencyMatrix NA4 = LatencyMatrix.load("na4");
    private static final long MONTREAL_BOSTON = 8_000_000;   // ns, na4

    /** Boston's transport policy over a bare transport whose stack above is {@code up}. */
    private static WanDelayPolicy bostonPolicy(Protocol up, double jitterMs) {
        TCP tp = new TCP();
        tp.setUpProtocol(up);
        WanDelayPolicy p = new WanDelayPolicy();
        p.init(tp);
        return p.wan(new WAN_DELAY().configure(NA4, "boston", jitterMs));
    }

    /** A message as montreal sends it: its site stamped by montreal's WAN_DELAY. */
    private static Message fromMontreal(Address sender, String name, boolean oob) {
        WAN_DELAY montreal = new WAN_DELAY().configure(NA4, "montreal", 0);
        montreal.setDownProtocol(new Protocol() {
            @Override public Object down(Message msg) { return null; }
        });
        Message m = new ObjectMessage(null, name).setSrc(sender);
        if (oob) m.setFlag(Message.Flag.OOB);
        montreal.down(m);
        return m;
    }

    @Test void aBatchWhoseFirstSlotIsEmptyIsDelayedNotDropped() {
        Up up = new Up();
        WanDelayPolicy boston = bostonPolicy(up, 0);
        try {
            Address sender = UUID.randomUUID();
            long t0 = System.nanoTime();
            Message gone = fromMontreal(sender, "gone", false), kept = fromMontreal(sender, "kept", false);
            MessageBatch batch = new MessageBatch(4).sender(sender).add(gone).add(kept);
            batch.removeIf(m -> m == gone, true);   // a lower layer took the first one: its slot is left empty
            assertThat(batch.size()).isEqualTo(1);
            assertThat(boston.process(batch, false)).isTrue();
            up.await(1);
            assertThat(up.names).containsExactly("kept");
            assertThat(up.at.get(0) - t0).isGreaterThanOrEqualTo(MONTREAL_BOSTON);
        } finally {
            boston.destroy();
        }
    }

    /**
     * A link stays FIFO under jitter, and no message comes up before its sending plus the link's delay: the
     * delay is the experiments' independent variable.
     */
    @Test void aLinkIsFifoAndNeverEarlyUnderJitter() throws Exception {
        Up up = new Up();
        WanDelayPolicy boston = bostonPolicy(up, 6);
        try {
            Address sender = UUID.randomUUID();
            List<String> sent = new ArrayList<>();
            List<Long> arrived = new ArrayList<>();   // before it was sent
            for (int i = 0; i < 300; i++) {
                if (i % 50 == 10) {   // now and then a JGroups batch
                    MessageBatch b = new MessageBatch(4).sender(sender).multicast(true);
                    arrived.add(System.nanoTime()); arrived.add(arrived.getLast()); arrived.add(arrived.getLast()); arrived.add(arrived.getLast());
                    for (int j = 0; j < 4; j++) { String n = i + "." + j; b.add(fromMontreal(sender, n, false)); sent.add(n); }
                    boston.process(b, false);
                } else {
                    arrived.add(System.nanoTime());
                    Message m = fromMontreal(sender, String.valueOf(i), false);
                    sent.add(String.valueOf(i));
                    boston.process(m, false);
                }
                if (i % 7 == 0) Thread.sleep(0, 300_000);
            }
            up.await(sent.size());
            assertThat(up.names).containsExactlyElementsOf(sent);
            for (int i = 0; i < sent.size(); i++)
                assertThat(up.at.get(i) - arrived.get(i)).as("%s came up after %d us", sent.get(i), (up.at.get(i) - arrived.get(i)) / 1000)
                        .isGreaterThanOrEqualTo(MONTREAL_BOSTON);
            assertThat(up.batches.stream().mapToInt(Integer::intValue).max().orElse(0)).as("several due at once leave together").isGreaterThan(1);
        } finally {
            boston.destroy();
        }
    }

    /**
     * A batch of messages sent at once (one send time: a link's delay counts from the sending, so messages sent apart
     * are due apart) is due together and comes up as one batch, in order.
     */
    @Test void aBatchComesUpWhole() {
        Up up = new Up();
        WanDelayPolicy boston = bostonPolicy(up, 0);
        try {
            Address sender = UUID.randomUUID();
            MessageBatch b = new MessageBatch(16).sender(sender).multicast(true);
            long sent = 0;
            for (int i = 0; i < 10; i++) {
                Message m = fromMontreal(sender, "m" + i, false);
                WAN_DELAY.SiteHeader h = m.getHeader(WAN_DELAY.PROTOCOL_ID);
                if (i == 0) sent = h.sent;
                h.sent = sent;   // stamped apart by the microseconds it took to make them
                b.add(m);
            }
            boston.process(b, false);
            up.await(10);
            assertThat(up.batches).containsExactly(10);
            assertThat(up.names).containsExactly("m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9");
        } finally {
            boston.destroy();
        }
    }

    /**
     * OOB messages (credits, heartbeats, retransmission requests) have a lane of their own: one never waits
     * behind a regular message whose processing blocks, or flow control and failure detection could deadlock.
     */
    @Test void anOobMessageDoesNotWaitBehindABlockedRegularOne() {
        Up up = new Up();
        up.holdRegular = new CountDownLatch(1);
        WanDelayPolicy boston = bostonPolicy(up, 0);
        try {
            Address sender = UUID.randomUUID();
            boston.process(fromMontreal(sender, "regular", false), false);
            up.await(1);                                   // its lane's thread is now stuck above
            boston.process(fromMontreal(sender, "oob", true), true);
            up.await(2);
            assertThat(up.names).containsExactly("regular", "oob");
        } finally {
            up.holdRegular.countDown();
            boston.destroy();
        }
    }

    /** A message montreal sent {@code agoNanos} ago (its send stamp moved back), as a slow receiving thread reads it late. */
    private static Message sentAgo(Address sender, String name, long agoNanos) {
        Message m = fromMontreal(sender, name, false);
        WAN_DELAY.SiteHeader h = m.getHeader(WAN_DELAY.PROTOCOL_ID);
        h.sent -= agoNanos;
        return m;
    }

    /**
     * A message that reached the receiver after its link's delay had passed (loopback and the scheduler took longer)
     * goes up on the receiving thread at once, in the link's order: not while an earlier one of its link is still held.
     * One stamped on another machine's clock counts from its receipt.
     */
    @Test void aMessageDueOnArrivalGoesUpAtOnceInTheLinksOrder() throws Exception {
        Up up = new Up();
        WanDelayPolicy boston = bostonPolicy(up, 0);
        try {
            Address sender = UUID.randomUUID();
            boston.process(sentAgo(sender, "late", 2 * MONTREAL_BOSTON), false);
            assertThat(up.names).as("passed up before process returned").containsExactly("late");
            boston.process(fromMontreal(sender, "fresh", false), false);   // due in 8 ms: held
            boston.process(sentAgo(sender, "late-behind", 2 * MONTREAL_BOSTON), false);   // due, but behind "fresh"
            assertThat(up.names).containsExactly("late");
            up.await(3);
            assertThat(up.names).containsExactly("late", "fresh", "late-behind");
            Message elsewhere = sentAgo(sender, "other-clock", 2 * MONTREAL_BOSTON);
            ((WAN_DELAY.SiteHeader) elsewhere.getHeader(WAN_DELAY.PROTOCOL_ID)).host = WAN_DELAY.HOST + 1;
            long t0 = System.nanoTime();
            boston.process(elsewhere, false);
            up.await(4);
            assertThat(up.names.get(3)).isEqualTo("other-clock");
            assertThat(up.at.get(3) - t0).as("from its receipt").isGreaterThanOrEqualTo(MONTREAL_BOSTON);
            // a batch all of whose messages are due goes up whole on the receiving thread
            MessageBatch b = new MessageBatch(4).sender(sender).multicast(true).add(sentAgo(sender, "b1", MONTREAL_BOSTON)).add(sentAgo(sender, "b2", MONTREAL_BOSTON));
            boston.process(b, false);
            assertThat(up.names).hasSize(6).endsWith("b1", "b2");
            assertThat(up.batches.getLast()).isEqualTo(2);
        } finally {
            boston.destroy();
        }
    }

    /** Two channels on the project's stack (montreal, boston on na4); boston records what it receives, when, and how many batches of several. */
    private static final class TwoSites implements AutoCloseable {
        final List<JChannel> chs = new ArrayList<>();
        final List<String> got = new CopyOnWriteArrayList<>();
        final List<Long> gotAt = new CopyOnWriteArrayList<>();
        final java.util.concurrent.atomic.AtomicInteger batches = new java.util.concurrent.atomic.AtomicInteger();

        TwoSites() throws Exception {
            LatencyMatrix m = NA4.first(2);
            List<Integer> ports = GcsSettings.freePorts(2);
            String cluster = "wan-delay-" + System.nanoTime();
            for (String site : m.sites()) {
                GcsSettings s = GcsSettings.loopback(cluster, site, m.sites(), ports, m);
                JChannel ch = new JChannel(new java.io.ByteArrayInputStream(StackXml.build(s).getBytes(java.nio.charset.StandardCharsets.UTF_8)));
                ch.name(site + "/1");
                ((WAN_DELAY) ch.getProtocolStack().findProtocol(WAN_DELAY.class)).configure(m, site, 0);
                if (site.equals("boston")) ch.setReceiver(new Receiver() {
                    @Override public void receive(Message msg) { got.add(msg.getObject()); gotAt.add(System.nanoTime()); }
                    @Override public void receive(MessageBatch batch) {
                        if (batch.size() > 1) batches.incrementAndGet();
                        for (Message msg : batch) receive(msg);
                    }
                });
                chs.add(ch);
                ch.connect(cluster);
            }
            for (long end = System.nanoTime() + 20_000_000_000L; chs.get(1).getView().size() < 2 && System.nanoTime() < end; ) Thread.sleep(10);
            assertThat(chs.get(1).getView().size()).isEqualTo(2);
        }

        JChannel montreal() { return chs.get(0); }
        WAN_DELAY bostonWan() { return chs.get(1).getProtocolStack().findProtocol(WAN_DELAY.class); }

        void awaitGot(int n) throws InterruptedException {
            for (long end = System.nanoTime() + 10_000_000_000L; got.size() < n && System.nanoTime() < end; ) Thread.sleep(5);
        }

        @Override public void close() {
            for (int i = chs.size() - 1; i >= 0; i--) chs.get(i).close();
        }
    }

    /** Over real connections and the project's stack: a burst from montreal reaches boston in order, not before 8 ms, in batches. */
    @Test void aBurstOverTheRealStackIsFifoAndNeverEarly() throws Exception {
        try (TwoSites t = new TwoSites()) {
            List<String> sent = new ArrayList<>();
            List<Long> sentAt = new ArrayList<>();
            for (int i = 0; i < 500; i++) {
                sent.add("m" + i);
                sentAt.add(System.nanoTime());
                t.montreal().send(new ObjectMessage(null, "m" + i));
            }
            t.awaitGot(sent.size());
            assertThat(t.got).containsExactlyElementsOf(sent);
            for (int i = 0; i < sent.size(); i++) assertThat(t.gotAt.get(i) - sentAt.get(i)).isGreaterThanOrEqualTo(MONTREAL_BOSTON);
            assertThat(t.batches.get()).as("due together, up together").isGreaterThan(0);
        }
    }

    /**
     * Fault injection over the real stack: while boston is cut off from montreal nothing of montreal's arrives
     * (what was on the emulated wire at the cut is lost too); after the heal, NAKACK2's retransmissions make
     * the stream whole, in order.
     */
    @Test void aPartitionDropsAndTheHealRecoversByRetransmission() throws Exception {
        try (TwoSites t = new TwoSites()) {
            t.montreal().send(new ObjectMessage(null, "before"));
            t.awaitGot(1);
            t.bostonWan().partitionFrom(java.util.Set.of("montreal"));
            for (int i = 0; i < 20; i++) t.montreal().send(new ObjectMessage(null, "cut" + i));
            Thread.sleep(300);
            assertThat(t.got).containsExactly("before");
            t.bostonWan().partitionFrom(java.util.Set.of());
            t.montreal().send(new ObjectMessage(null, "after"));
            t.awaitGot(22);
            List<String> expected = new ArrayList<>(List.of("before"));
            for (int i = 0; i < 20; i++) expected.add("cut" + i);
            expected.add("after");
            assertThat(t.got).containsExactlyElementsOf(expected);
        }
    }

    /**
     * A cut-off site's messages are all dropped, in a batch too (the fault injection removed only a batch's
     * first one: heartbeats came through, the failure detector never suspected the cut-off site, and a
     * "partitioned" site stayed in the view while its traffic was half lost).
     */
    @Test void everyMessageOfACutOffSiteInABatchIsDropped() throws Exception {
        WAN_DELAY boston = new WAN_DELAY().configure(null, "boston", 0);
        List<Message> up = new CopyOnWriteArrayList<>();
        boston.setUpProtocol(new Protocol() {
            @Override public Object up(Message msg) { up.add(msg); return null; }
            @Override public void up(MessageBatch batch) { for (Message m : batch) up.add(m); }
        });
        Address montreal = UUID.randomUUID();
        org.jgroups.util.NameCache.add(montreal, "montreal/1");
        boston.partitionFrom(java.util.Set.of("montreal"));
        MessageBatch batch = new MessageBatch(4).sender(montreal);
        for (int i = 0; i < 4; i++) batch.add(new ObjectMessage(null, "m" + i).setSrc(montreal));
        boston.up(batch);
        boston.up(new ObjectMessage(null, "single").setSrc(montreal));
        assertThat(up).isEmpty();
        boston.partitionFrom(java.util.Set.of());   // healed
        boston.up(new ObjectMessage(null, "after").setSrc(montreal));
        assertThat(up).extracting(m -> (String) m.getObject()).containsExactly("after");
    }
}
