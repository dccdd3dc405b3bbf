package org.wanrep.gcs.core;

import org.junit.jupiter.api.Test;
import org.wanrep.gcs.Delivery;
import org.wanrep.gcs.MsgId;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The leader's decision on hand-made states. */
class FlushPlannerTest {
    private static final Epoch E1 = new Epoch(1, 1, "a/1");
    private static final List<String> ABC = List.of("a/1", "b/1", "c/1");

    private static Proto.Held held(MsgId id, Delivery d) { return new Proto.Held(id, d, new byte[]{(byte) id.seq()}); }

    private static Proto.FlushState state(Epoch installed, long next, long gsn, List<Proto.Assignment> as, List<Proto.Held> hs, Map<String, Long> rcv) {
        return new Proto.FlushState(5, installed, ABC, true, Epoch.NONE, Epoch.NONE, List.of(), next, gsn, as, hs, rcv);
    }

    @Test
    void completesWhatOneSurvivorDeliveredAndSkipsWhatNobodyHolds() {
        MsgId m1 = new MsgId("a/1", 1), m2 = new MsgId("a/1", 2), m3 = new MsgId("c/1", 1), m4 = new MsgId("b/1", 1);
        long seq = Levels.sequencer(1);
        // b delivered slots 1-2 (m1, m2); c holds m2 only, knows slot 3 = m3 (data lost with a); b also has unordered m4
        Map<String, Proto.FlushState> reports = new LinkedHashMap<>();
        reports.put("b/1", state(E1, 3, 2, List.of(new Proto.Assignment(1, m1, seq), new Proto.Assignment(2, m2, seq)),
                List.of(held(m1, Delivery.AGREED), held(m2, Delivery.SAFE), held(m4, Delivery.AGREED)), Map.of("a/1", 2L, "b/1", 1L)));
        reports.put("c/1", state(E1, 1, 0, List.of(new Proto.Assignment(1, m1, seq), new Proto.Assignment(2, m2, seq), new Proto.Assignment(3, new MsgId("a/1", 3), seq)),
                List.of(held(m2, Delivery.SAFE)), Map.of("a/1", 2L)));
        Proto.Proposal p = FlushPlanner.plan(5, List.of("b/1", "c/1"), reports);
        assertThat(p).isNotNull();
        assertThat(p.fromSlot()).isEqualTo(1);
        assertThat(p.assignments()).extracting(Proto.Assignment::id).containsExactly(m1, m2, null, m4);
        assertThat(p.startSlot()).isEqualTo(5);
        assertThat(p.gsnAtStart()).isEqualTo(3);
        // c lacks m1 and m4: shipped; m2 is held by both: not shipped
        assertThat(p.data()).extracting(Proto.Held::id).containsExactlyInAnyOrder(m1, m4);
        assertThat(p.newEpoch().number()).isEqualTo(2);
        assertThat(p.baseEpoch()).isEqualTo(E1);
        assertThat(m3).isNotNull();
    }

    @Test
    void noPrimaryWithoutAMajorityOfTheLastPrimaryView() {
        Map<String, Proto.FlushState> reports = new LinkedHashMap<>();
        reports.put("a/1", state(E1, 1, 0, List.of(), List.of(), Map.of()));
        // two fresh incarnations of b and c: not continuing, and may not bootstrap
        reports.put("b/2", new Proto.FlushState(5, Epoch.NONE, List.of(), false, Epoch.NONE, Epoch.NONE, List.of(), 1, 0, List.of(), List.of(), Map.of()));
        reports.put("c/2", new Proto.FlushState(5, Epoch.NONE, List.of(), false, Epoch.NONE, Epoch.NONE, List.of(), 1, 0, List.of(), List.of(), Map.of()));
        assertThat(FlushPlanner.plan(5, List.of("a/1", "b/2", "c/2"), reports)).isNull();
    }

    @Test
    void anUncommittedPlanWithTheSameNumberDoesNotMakeAMemberContinuing() {
        Epoch committed = new Epoch(2, 5, "b/1"), stale = new Epoch(2, 2, "a/1");
        assertThat(FlushPlanner.continuing(E1, stale, E1, committed)).isFalse();
        assertThat(FlushPlanner.continuing(E1, committed, E1, committed)).isTrue();
        assertThat(FlushPlanner.continuing(committed, Epoch.NONE, Epoch.NONE, committed)).isTrue();
    }

    /**
     * Epoch 1 = {s0..s3}. s0 crashed; s1 led epoch 2 = {s1,s2,s3} and installed it alone (the commit
     * did not reach s2, s3), then proposed epoch 3 from it (s3 accepted) and crashed. s2 and s3 are
     * a majority of epoch 2, the latest epoch known to be installed (s3's plan was based on it), so
     * with a new incarnation of s0 they go on from epoch 2; epoch 3 cannot have committed (s2, a
     * member of its view, never accepted it).
     */
    @Test
    void goesOnFromAnEpochKnownInstalledOnlyThroughTheBaseOfAnAcceptedPlan() {
        List<String> four = List.of("s0/1", "s1/1", "s2/1", "s3/1"), three = List.of("s1/1", "s2/1", "s3/1");
        Epoch e1 = new Epoch(1, 1, "s0/1"), e2 = new Epoch(2, 2, "s1/1"), e3 = new Epoch(3, 3, "s1/1");
        Map<String, Proto.FlushState> reports = new LinkedHashMap<>();
        reports.put("s2/1", new Proto.FlushState(6, e1, four, true, e2, e1, three, 10, 9, List.of(), List.of(), Map.of()));
        reports.put("s3/1", new Proto.FlushState(6, e1, four, true, e3, e2, three, 10, 9, List.of(), List.of(), Map.of()));
        reports.put("s0/2", new Proto.FlushState(6, Epoch.NONE, List.of(), false, Epoch.NONE, Epoch.NONE, List.of(), 1, 0, List.of(), List.of(), Map.of()));
        Proto.Proposal p = FlushPlanner.plan(6, List.of("s2/1", "s3/1", "s0/2"), reports);
        assertThat(p).isNotNull();
        assertThat(p.baseEpoch()).isEqualTo(e2);
        assertThat(p.newEpoch().number()).isEqualTo(4);
        // with s2 missing, epoch 3 may have committed at s1 (every member it knows of accepted it): wait
        reports.remove("s2/1");
        assertThat(FlushPlanner.plan(7, List.of("s3/1", "s0/2"), reports)).isNull();
    }

    /**
     * The engine simulation's seed 404, by hand. Epoch 1 = {s0..s3}, s0 its sequencer. s0 ordered its own
     * AGREED message m at slot 11 and delivered it at once, then was cut off. s1 proposed epoch 2 =
     * {s1,s2,s3} putting s1's message x at slot 11; s2 accepted; s1 crashed before s3 accepted, so epoch 2
     * never committed. s0, s2, s3 flush: slot 11 stays m (s0 delivered it; the rival plan was delivered by
     * nobody), x goes after it, and no message is placed twice.
     */
    @Test
    void aPlanThatNeverCommittedDoesNotOverrideWhatTheSequencerDelivered() {
        List<String> four = List.of("s0/1", "s1/1", "s2/1", "s3/1"), three = List.of("s1/1", "s2/1", "s3/1");
        Epoch e1 = new Epoch(1, 1, "s0/1"), e2 = new Epoch(2, 3, "s1/1");
        MsgId m = new MsgId("s0/1", 9), x = new MsgId("s1/1", 1);
        long seq = Levels.sequencer(1), plan2 = Levels.plan(2);
        Map<String, Proto.FlushState> reports = new LinkedHashMap<>();
        reports.put("s0/1", new Proto.FlushState(6, e1, four, true, Epoch.NONE, Epoch.NONE, List.of(), 12, 11,
                List.of(new Proto.Assignment(11, m, seq)), List.of(held(m, Delivery.AGREED)), Map.of("s0/1", 9L)));
        reports.put("s2/1", new Proto.FlushState(6, e1, four, true, e2, e1, three, 11, 10,
                List.of(new Proto.Assignment(11, x, plan2)), List.of(held(x, Delivery.AGREED)), Map.of("s1/1", 1L)));
        reports.put("s3/1", new Proto.FlushState(6, e1, four, true, Epoch.NONE, Epoch.NONE, List.of(), 11, 10,
                List.of(), List.of(held(x, Delivery.AGREED)), Map.of("s1/1", 1L)));
        Proto.Proposal p = FlushPlanner.plan(6, List.of("s0/1", "s2/1", "s3/1"), reports);
        assertThat(p).isNotNull();
        assertThat(p.fromSlot()).isEqualTo(11);
        assertThat(p.assignments()).extracting(Proto.Assignment::id).containsExactly(m, x);
        assertThat(p.gsnAtStart()).isEqualTo(12);
    }
}
