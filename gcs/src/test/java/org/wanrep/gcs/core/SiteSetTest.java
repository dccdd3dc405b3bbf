package org.wanrep.gcs.core;

import org.junit.jupiter.api.Test;
import org.wanrep.gcs.Delivery;
import org.wanrep.gcs.MsgId;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The quorum rule across a change of the configured sites: the pure rule and the flush leader's decision. */
class SiteSetTest {
    private static final List<String> ABC = List.of("a", "b", "c"), ABCD = List.of("a", "b", "c", "d");
    private static final Epoch E1 = new Epoch(1, 1, "a/1");
    private static final List<String> E1_MEMBERS = List.of("a/1", "b/1", "c/1");

    @Test
    void aChangeAddsOrRemovesExactlyOneSite() {
        assertThat(SiteSet.apply(ABC, ABCD)).isEqualTo(ABCD);
        assertThat(SiteSet.apply(ABC, List.of("a", "b"))).containsExactly("a", "b");
        assertThat(SiteSet.apply(ABC, List.of("a", "b", "c", "d", "e"))).isNull();   // two at once
        assertThat(SiteSet.apply(ABC, List.of("a", "b", "d"))).isNull();             // one out, one in
        assertThat(SiteSet.apply(ABC, ABC)).isNull();
        assertThat(SiteSet.apply(List.of("a"), List.of())).isNull();
        assertThat(SiteSet.apply(ABC, List.of("a", "b", "c", "c"))).isNull();
        assertThat(SiteSet.apply(ABC, List.of("a", "b", "c", "d/1"))).isNull();
    }

    /** Single-site changes: every majority of the old set meets every majority of the new one (exhaustive up to 7 sites). */
    @Test
    void oldAndNewMajoritiesAlwaysIntersect() {
        for (int n = 1; n <= 7; n++) {
            int all = n + 1;   // sites 0..n; old = 0..n-1, new = 0..n
            for (int q1 = 0; q1 < 1 << all; q1++) {
                if ((q1 & 1 << n) != 0 || Integer.bitCount(q1) * 2 <= n) continue;   // a majority of the old set
                for (int q2 = 0; q2 < 1 << all; q2++) {
                    if (Integer.bitCount(q2) * 2 <= n + 1) continue;                  // a majority of the new set
                    assertThat(q1 & q2).as("n=%d %s %s", n, q1, q2).isNotZero();
                }
            }
        }
    }

    @Test
    void majorityCountsConfiguredSitesOnly() {
        assertThat(SiteSet.majority(List.of("a/1", "b/1"), ABC)).isTrue();
        assertThat(SiteSet.majority(List.of("a/1", "b/1"), ABCD)).isFalse();
        assertThat(SiteSet.majority(List.of("a/1", "b/1", "x/1", "y/1"), ABCD)).isFalse();
        assertThat(SiteSet.majority(List.of("a/1", "a/2"), List.of("a", "b"))).isFalse();
    }

    private static Proto.FlushState state(Epoch installed, List<String> members, long next, long gsn, List<Proto.Assignment> as,
                                          List<Proto.Held> hs, List<String> sites, long sitesGsn) {
        return new Proto.FlushState(5, installed, members, true, Epoch.NONE, Epoch.NONE, List.of(), next, gsn, as, hs, Map.of(),
                sites, sitesGsn);
    }

    /**
     * a ordered the addition of d (SAFE, so b and c hold it), delivered it and was cut off; b and c have
     * not delivered it yet. Under the set each of them has delivered, b and c are 2 of 3; the flush
     * completes the change, after which they are 2 of 4: no primary (a and d may be on the other side).
     */
    @Test
    void theQuorumOfAFlushIsCountedUnderTheSitesAfterTheCompletedHistory() {
        MsgId change = new MsgId("a/1", 1);
        long seq = Levels.sequencer(1);
        List<Proto.Assignment> as = List.of(new Proto.Assignment(1, change, seq));
        Map<String, Proto.FlushState> reports = new LinkedHashMap<>();
        reports.put("b/1", state(E1, E1_MEMBERS, 1, 0, as, List.of(new Proto.Held(change, Delivery.SAFE, new byte[1], ABCD)), ABC, 0));
        reports.put("c/1", state(E1, E1_MEMBERS, 1, 0, as, List.of(new Proto.Held(change, Delivery.SAFE, new byte[1], ABCD)), ABC, 0));
        assertThat(FlushPlanner.plan(5, List.of("b/1", "c/1"), reports)).isNull();

        // the same history with an ordinary message: b and c go on (2 of 3, and 2 of the last primary's 3)
        reports.put("b/1", state(E1, E1_MEMBERS, 1, 0, as, List.of(new Proto.Held(change, Delivery.SAFE, new byte[1])), ABC, 0));
        reports.put("c/1", state(E1, E1_MEMBERS, 1, 0, as, List.of(new Proto.Held(change, Delivery.SAFE, new byte[1])), ABC, 0));
        Proto.Proposal p = FlushPlanner.plan(5, List.of("b/1", "c/1"), reports);
        assertThat(p).isNotNull();
        assertThat(p.sites()).isEqualTo(ABC);

        // b delivered the change already, c not: the latest configuration among them counts
        reports.put("b/1", state(E1, E1_MEMBERS, 2, 1, as, List.of(new Proto.Held(change, Delivery.SAFE, new byte[1], ABCD)), ABCD, 1));
        reports.put("c/1", state(E1, E1_MEMBERS, 1, 0, as, List.of(new Proto.Held(change, Delivery.SAFE, new byte[1], ABCD)), ABC, 0));
        assertThat(FlushPlanner.plan(5, List.of("b/1", "c/1"), reports)).isNull();

        // with d (a joiner, never bootstrapping) they are 3 of 4: primary, and d gets the sites with the history
        reports.put("d/1", new Proto.FlushState(5, Epoch.NONE, List.of(), false, Epoch.NONE, Epoch.NONE, List.of(), 1, 0,
                List.of(), List.of(), Map.of(), ABCD, 0));
        p = FlushPlanner.plan(5, List.of("b/1", "c/1", "d/1"), reports);
        assertThat(p).isNotNull();
        assertThat(p.members()).containsExactly("b/1", "c/1", "d/1");
        assertThat(p.sites()).isEqualTo(ABCD);
        assertThat(p.sitesGsn()).isEqualTo(1);
        assertThat(p.gsnAtStart()).isEqualTo(1);
    }

    /** After c's removal, a and b are 2 of 2; once their epoch is installed, either alone is 1 of 2: no primary. */
    @Test
    void removingASiteShrinksTheMajority() {
        Map<String, Proto.FlushState> reports = new LinkedHashMap<>();
        reports.put("a/1", state(E1, E1_MEMBERS, 8, 7, List.of(), List.of(), List.of("a", "b"), 7));
        reports.put("b/1", state(E1, E1_MEMBERS, 8, 7, List.of(), List.of(), List.of("a", "b"), 7));
        reports.put("c/1", state(E1, E1_MEMBERS, 8, 7, List.of(), List.of(), List.of("a", "b"), 7));
        Proto.Proposal p = FlushPlanner.plan(5, List.of("a/1", "b/1", "c/1"), reports);
        assertThat(p).isNotNull();
        assertThat(p.members()).as("the removed site is left out of the epoch").containsExactly("a/1", "b/1");
        Epoch e2 = p.newEpoch();
        Map<String, Proto.FlushState> after = new LinkedHashMap<>();
        after.put("a/1", state(e2, List.of("a/1", "b/1"), 8, 7, List.of(), List.of(), List.of("a", "b"), 7));
        after.put("c/1", state(Epoch.NONE, List.of(), 8, 7, List.of(), List.of(), List.of("a", "b"), 7));
        assertThat(FlushPlanner.plan(6, List.of("a/1", "c/1"), after)).isNull();
    }

    /** A site started before its addition is ordered stays outside: it must not count in the next flush's majority. */
    @Test
    void membersOfUnconfiguredSitesStayOutsideTheEpoch() {
        Map<String, Proto.FlushState> reports = new LinkedHashMap<>();
        reports.put("a/1", state(E1, E1_MEMBERS, 1, 0, List.of(), List.of(), ABC, 0));
        reports.put("d/1", new Proto.FlushState(5, Epoch.NONE, List.of(), false, Epoch.NONE, Epoch.NONE, List.of(), 1, 0,
                List.of(), List.of(), Map.of(), ABCD, 0));   // its own files already name it: not the group's word
        reports.put("b/1", state(E1, E1_MEMBERS, 1, 0, List.of(), List.of(), ABC, 0));
        Proto.Proposal p = FlushPlanner.plan(5, List.of("a/1", "d/1", "b/1"), reports);
        assertThat(p).isNotNull();
        assertThat(p.members()).containsExactly("a/1", "b/1");
        assertThat(p.sites()).isEqualTo(ABC);
    }
}
