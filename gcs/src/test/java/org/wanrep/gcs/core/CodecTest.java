package org.wanrep.gcs.core;

import org.junit.jupiter.api.Test;
import org.wanrep.gcs.Delivery;
import org.wanrep.gcs.MsgId;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CodecTest {
    private static Proto roundTrip(Proto p) {
        byte[] b = Codec.encode(p);
        return Codec.decode(b, 0, b.length);
    }

    @Test
    void everyMessageSurvivesTheWire() {
        MsgId a = new MsgId("montreal/1", 7);
        Proto.Held h = new Proto.Held(a, Delivery.SAFE, new byte[]{1, 2, 3});
        Epoch e = new Epoch(3, 12, "montreal/1");
        Proto.Data d = (Proto.Data) roundTrip(new Proto.Data(3, 9, Delivery.OPT_SAFE, new byte[]{4, 5}));
        assertThat(d.epoch()).isEqualTo(3);
        assertThat(d.payload()).containsExactly(4, 5);
        assertThat(d.delivery()).isEqualTo(Delivery.OPT_SAFE);
        assertThat(roundTrip(new Proto.Order(3, 100, List.of(a, new MsgId("boston/2", 1))))).isEqualTo(new Proto.Order(3, 100, List.of(a, new MsgId("boston/2", 1))));
        assertThat(roundTrip(new Proto.Ack(3, 55, Map.of("montreal/1", 7L)))).isEqualTo(new Proto.Ack(3, 55, Map.of("montreal/1", 7L)));
        Proto.FlushState fs = (Proto.FlushState) roundTrip(new Proto.FlushState(12, e, List.of("montreal/1", "boston/1"), true, Epoch.NONE, e,
                List.of("montreal/1"), 5, 4, List.of(new Proto.Assignment(5, a, 7), new Proto.Assignment(6, null, 8)), List.of(h), Map.of("boston/1", 3L)));
        assertThat(fs.installedEpoch()).isEqualTo(e);
        assertThat(fs.acceptedBase()).isEqualTo(e);
        assertThat(fs.acceptedMembers()).containsExactly("montreal/1");
        assertThat(fs.assignments().get(1).id()).isNull();
        assertThat(fs.held().get(0).payload()).containsExactly(1, 2, 3);
        Proto.Proposal pr = (Proto.Proposal) roundTrip(new Proto.Proposal(12, new Epoch(4, 12, "a"), e, List.of("a/1"), 5, 7, 6,
                List.of(new Proto.Assignment(5, a, 8)), List.of(h), List.of()));
        assertThat(pr.newEpoch()).isEqualTo(new Epoch(4, 12, "a"));
        assertThat(pr.members()).containsExactly("a/1");
        assertThat(roundTrip(new Proto.ProposalAck(9))).isEqualTo(new Proto.ProposalAck(9));
        assertThat(roundTrip(new Proto.Commit(9))).isEqualTo(new Proto.Commit(9));
    }

    @Test
    void configurationChangesSurviveTheWire() {
        MsgId a = new MsgId("a/1", 2);
        List<String> abcd = List.of("a", "b", "c", "d");
        Proto.Data d = (Proto.Data) roundTrip(new Proto.Data(3, 2, Delivery.SAFE, new byte[]{9}, abcd));
        assertThat(d.sites()).isEqualTo(abcd);
        assertThat(((Proto.Data) roundTrip(new Proto.Data(3, 2, Delivery.SAFE, new byte[]{9}))).sites()).isNull();
        Proto.Held h = new Proto.Held(a, Delivery.SAFE, new byte[]{9}, abcd);
        Epoch e = new Epoch(3, 12, "a/1");
        Proto.FlushState fs = (Proto.FlushState) roundTrip(new Proto.FlushState(12, e, List.of("a/1"), false, Epoch.NONE, Epoch.NONE,
                List.of(), 3, 2, List.of(), List.of(h, new Proto.Held(new MsgId("b/1", 1), Delivery.AGREED, new byte[0])), Map.of(), abcd, 2));
        assertThat(fs.held().get(0).sites()).isEqualTo(abcd);
        assertThat(fs.held().get(1).sites()).isNull();
        assertThat(fs.sites()).isEqualTo(abcd);
        assertThat(fs.sitesGsn()).isEqualTo(2);
        Proto.Proposal pr = (Proto.Proposal) roundTrip(new Proto.Proposal(12, new Epoch(4, 12, "a/1"), e, List.of("a/1"), 5, 7, 6,
                List.of(), List.of(h), List.of(), abcd, 6));
        assertThat(pr.data().get(0).sites()).isEqualTo(abcd);
        assertThat(pr.sites()).isEqualTo(abcd);
        assertThat(pr.sitesGsn()).isEqualTo(6);
    }

    /** DATA and ORDER carry the sender's heldThrough (piggybacked stability); messages without it say 0. */
    @Test
    void piggybackedStabilitySurvivesTheWire() {
        MsgId a = new MsgId("a/1", 2);
        Proto.Data d = (Proto.Data) roundTrip(new Proto.Data(3, 9, Delivery.SAFE, new byte[]{4}, List.of("a", "b"), 1234567890123L));
        assertThat(d.heldThrough()).isEqualTo(1234567890123L);
        assertThat(d.sites()).containsExactly("a", "b");
        assertThat(d.seq()).isEqualTo(9);
        assertThat(((Proto.Data) roundTrip(new Proto.Data(3, 9, Delivery.SAFE, new byte[]{4}))).heldThrough()).isZero();
        Proto.Order o = new Proto.Order(3, 100, List.of(a, new MsgId("b/1", 5)), 101);
        assertThat(roundTrip(o)).isEqualTo(o);
        assertThat(((Proto.Order) roundTrip(o)).heldThrough()).isEqualTo(101);
        assertThat(new Proto.Order(3, 100, List.of(a)).heldThrough()).isZero();
    }

    /** A bundle carries several messages in one frame, in order; a single message's own encoding is a frame too. */
    @Test
    void aBundleCarriesSeveralMessagesInOrder() {
        MsgId a = new MsgId("a/1", 2);
        List<Proto> ms = List.of(
                new Proto.Data(3, 2, Delivery.SAFE, new byte[]{1, 2, 3}, null, 7),
                new Proto.Order(3, 8, List.of(a), 8),
                new Proto.Ack(3, 8, Map.of("a/1", 2L), 99, Map.of("b/1", 98L)),
                new Proto.Commit(12),
                new Proto.Data(3, 3, Delivery.RELIABLE, new byte[0], List.of("a"), 8));
        byte[] frame = Codec.bundle(ms.stream().map(Codec::encode).toList());
        // framed at an offset, as a JGroups message may hold it
        byte[] buf = new byte[frame.length + 10];
        System.arraycopy(frame, 0, buf, 5, frame.length);
        List<Proto> back = Codec.decodeAll(buf, 5, frame.length);
        assertThat(back).hasSize(5);
        Proto.Data d0 = (Proto.Data) back.get(0), d4 = (Proto.Data) back.get(4);
        assertThat(d0.payload()).containsExactly(1, 2, 3);
        assertThat(d0.heldThrough()).isEqualTo(7);
        assertThat(back.subList(1, 4)).containsExactlyElementsOf(ms.subList(1, 4));
        assertThat(d4.delivery()).isEqualTo(Delivery.RELIABLE);
        assertThat(d4.payload()).isEmpty();
        assertThat(d4.sites()).containsExactly("a");
        // one message alone, unframed
        byte[] one = Codec.encode(ms.get(1));
        assertThat(Codec.decodeAll(one, 0, one.length)).containsExactly(ms.get(1));
        // a bundle is never taken for one message, nor a truncated one for a shorter bundle
        assertThatThrownBy(() -> Codec.decode(frame, 0, frame.length)).hasMessageContaining("bundle");
        assertThatThrownBy(() -> Codec.decodeAll(frame, 0, frame.length - 1)).hasMessageContaining("corrupt");
        assertThatThrownBy(() -> Codec.decodeAll(buf, 5, frame.length + 1)).hasMessageContaining("corrupt");
    }

    @Test
    void corruptInputIsRejected() {
        assertThatThrownBy(() -> Codec.decode(new byte[]{99}, 0, 1)).hasMessageContaining("unknown total-order message type");
        assertThatThrownBy(() -> Codec.decode(new byte[]{1, 0}, 0, 2)).hasMessageContaining("corrupt");
    }
}
