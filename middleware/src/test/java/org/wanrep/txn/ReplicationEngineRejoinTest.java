package org.wanrep.txn;

import org.junit.jupiter.api.Test;
import org.wanrep.gcs.Delivery;
import org.wanrep.gcs.GcsMessage;
import org.wanrep.gcs.GcsView;
import org.wanrep.gcs.MsgId;
import org.wanrep.lock.TableSet;
import org.wanrep.wire.WireMessage;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The engine's rejoin logic with an executor that answers at once: catch-up from a log, positions, tentative work outside the primary. */
class ReplicationEngineRejoinTest {
    /** Records what it is asked to do and answers OK at once. */
    static final class Recording implements TxnExecutor {
        final List<String> calls = new ArrayList<>();
        public void execute(Txn t, boolean commit, Done done) { calls.add("execute " + t.request().id().seq() + (commit ? " final" : "") + " " + t.recordSql()); done.completed(Outcome.OK); }
        public void cancel(Txn t) { calls.add("cancel " + t.request().id().seq()); }
        public void commit(Txn t, Done done) { calls.add("commit " + t.request().id().seq() + " " + t.recordSql()); done.completed(Outcome.OK); }
        public void rollback(Txn t, Done done) { calls.add("rollback " + t.request().id().seq()); done.completed(Outcome.OK); }
        public void finish(Txn t) { }
    }

    private static GcsView view(boolean primary, boolean joined, long firstGsn) {
        return new GcsView(7, 2, List.of("a/1", "b/1", "c/2"), primary, joined, firstGsn, primary ? "a/1" : null);
    }

    private static byte[] request(long n, String table) {
        return TxnRequestCodec.encode(new TxnRequest(new RequestId("a", n), TxnRequest.Kind.AUTOCOMMIT, TableSet.of(Set.of(), Set.of(table)),
                "postgres", List.of(WireMessage.query("UPDATE " + table + " SET v = v + 1")), 0, 0));
    }

    @Test
    void aSiteBehindReplaysWhatItMissedFromALogSkippingWhatItHadAndRecordsEachGsn() {
        Recording x = new Recording();
        ReplicationEngine e = new ReplicationEngine("c", Delivery.SAFE, x);
        List<String> fatal = new ArrayList<>();
        e.onFatal(fatal::add);
        // the replica had every GSN up to 5, and 7 (committed out of order before it stopped)
        e.recover(5, new TreeSet<>(Set.of(7L)), () -> { throw new AssertionError("same history"); });
        List<long[]> asked = new ArrayList<>();
        e.catchUpFrom((v, from, to, max) -> {
            asked.add(new long[]{from, to});
            List<OrderedLog.Entry> out = new ArrayList<>();
            for (long g = from; g <= to; g++) {
                // t1 and t2 alternate: GSN 6 and 8 write t1, 7 and 9 t2
                out.add(new OrderedLog.Entry(g, "a/1", g, request(g, g % 2 == 0 ? "t1" : "t2"), null));
                if (g == 8) out.add(new OrderedLog.Entry(8, null, 0, null, List.of("a/1", "b/1")));
            }
            return out;
        });
        e.viewChanged(view(true, true, 10));
        assertThat(fatal).isEmpty();
        assertThat(asked).singleElement().satisfies(r -> assertThat(r).containsExactly(6, 9));
        assertThat(x.calls).containsExactly(
                "execute 6 final SELECT wanrep.record_position(6, 5, false)", "commit 6 SELECT wanrep.record_position(6, 5, false)",
                "execute 8 final SELECT wanrep.record_position(8, 7, false)", "commit 8 SELECT wanrep.record_position(8, 7, false)",
                "execute 9 final SELECT wanrep.record_position(9, 8, false)", "commit 9 SELECT wanrep.record_position(9, 8, false)");
        assertThat(e.lastGsn()).isEqualTo(9);
        assertThat(e.lastCatchUp()).isEqualTo(new ReplicationEngine.CatchUp(4, e.lastCatchUp().millis()));
        assertThat(e.acceptedView()).isEqualTo(view(true, true, 10));
        // the log it keeps now serves others from where it caught up
        try (OrderedLog log = OrderedLog.temporary(100, 1 << 20)) {
            e.keepLog(log);
            e.ordered(new GcsMessage(new MsgId("b/1", 1), Delivery.SAFE, request(10, "t1")), 10);
            assertThat(log.last()).isEqualTo(10);
        }
    }

    private static final List<String> ABC = List.of("a/1", "b/1", "c/2");

    private static GcsView members(List<String> members, boolean primary, boolean joined, long firstGsn) {
        return new GcsView(firstGsn, firstGsn, members, primary, joined, firstGsn, primary ? "a/1" : null);
    }

    /** A DML request that ships a write set under a write-set policy. */
    private static byte[] shipped(long n, String table) {
        return TxnRequestCodec.encode(new TxnRequest(new RequestId("a", n), TxnRequest.Kind.AUTOCOMMIT, TableSet.of(Set.of(), Set.of(table)),
                "postgres", List.of(WireMessage.query("UPDATE " + table + " SET v = v + 1")), 0, 0, java.util.Map.of(), true, null));
    }

    /** Primary-copy with table t1's primary at a: c only applies. */
    private static ReplicationEngine writeSetEngine(String site, Recording x) {
        return new ReplicationEngine(site, Delivery.SAFE, x, new ExecutionPolicy(ExecutionPolicy.Kind.PRIMARY_COPY, List.of("a", "b", "c"),
                java.util.Map.of("t1", "a")), WriteSetIo.NONE);
    }

    @Test
    @org.junit.jupiter.api.Timeout(20)   // a leftover nobody drops would keep the transfer waiting for ever
    void aWriteSetSiteBackInThePrimaryComponentTakesACopyAtTheViewsFirstGsnAndDropsWhatWaitedForOldViews() {
        Recording x = new Recording();
        ReplicationEngine e = writeSetEngine("c", x);
        List<String> fatal = new ArrayList<>();
        e.onFatal(fatal::add);
        List<Long> transfers = new ArrayList<>();
        e.stateTransferFrom(v -> {
            transfers.add(v.firstGsn());
            return v.firstGsn() - 1;   // the copy prepared at F-1
        });
        e.viewChanged(members(ABC, true, false, 1));
        e.ordered(new GcsMessage(new MsgId("a/1", 1), Delivery.SAFE, shipped(1, "t1")), 1);   // waits for a's write set
        assertThat(e.pending()).isEqualTo(1);
        e.viewChanged(members(List.of("c/2"), false, false, 2));   // cut off; the others go on without it
        e.viewChanged(members(ABC, true, true, 9));                // back: its write set went to views c was not in
        assertThat(fatal).isEmpty();
        assertThat(transfers).containsExactly(9L);
        assertThat(e.lastGsn()).isEqualTo(8);
        assertThat(e.pending()).isZero();
        assertThat(e.lastTransfer()).isNotNull();
        assertThat(x.calls).isEmpty();   // nothing executed or applied here: the copy has it
        // the view's deliveries come live
        e.ordered(new GcsMessage(new MsgId("b/1", 5), Delivery.SAFE, shipped(20, "t1")), 9);
        assertThat(e.pending()).isEqualTo(1);
        assertThat(fatal).isEmpty();
    }

    @Test
    @org.junit.jupiter.api.Timeout(20)
    void aServingWriteSetSiteQueuesASnapshotBoundaryAtTheFirstGsnMinusOneWhenAMemberJoins() throws Exception {
        ReplicationEngine e = writeSetEngine("a", new Recording());
        List<ReplicationEngine.Boundary> prepared = new ArrayList<>();
        e.snapshotsForJoiners(prepared::add);
        e.viewChanged(members(List.of("a/1", "b/1"), true, false, 1));
        e.viewChanged(members(ABC, true, false, 1));   // nothing ordered yet: no copy prepared
        assertThat(prepared).isEmpty();
        for (long g = 1; g <= 3; g++) e.ordered(new GcsMessage(new MsgId("b/1", g), Delivery.SAFE, shipped(g, "t2")), g);
        e.viewChanged(members(List.of("a/1", "b/1"), true, false, 4));   // c left: nothing to prepare
        assertThat(prepared).isEmpty();
        e.viewChanged(members(List.of("a/1", "b/1", "c/3"), true, false, 4));
        assertThat(prepared).singleElement().satisfies(b -> assertThat(b.gsn()).isEqualTo(3));
        // behind GSN 1 to 3 (waiting for their write sets), ahead of the view's own deliveries
        assertThatThrownBy(() -> e.awaitBoundary(prepared.get(0), java.time.Duration.ofMillis(50)))
                .isInstanceOf(java.util.concurrent.TimeoutException.class);
    }

    @Test
    void withoutALogToCatchUpFromItStopsAsBefore() {
        ReplicationEngine e = new ReplicationEngine("c", Delivery.SAFE, new Recording());
        List<String> fatal = new ArrayList<>();
        e.onFatal(fatal::add);
        e.recover(5, new TreeSet<>(), () -> { });
        e.catchUpFrom((v, from, to, max) -> { throw new IllegalStateException("site b does not hold GSN 6 to 9 in its log"); });
        e.viewChanged(view(true, true, 10));
        assertThat(fatal).singleElement().asString().contains("could not catch up").contains("state transfer");
        assertThat(e.current()).isFalse();
    }

    @Test
    void aTentativeAttemptEndsWhenTheSiteLeavesThePrimaryComponentAndRunsAgainWhenBack() {
        Recording x = new Recording();
        ReplicationEngine e = new ReplicationEngine("c", Delivery.OPT_SAFE, x);
        List<String> fatal = new ArrayList<>();
        e.onFatal(fatal::add);
        e.viewChanged(view(true, false, 1));
        GcsMessage m = new GcsMessage(new MsgId("a/1", 1), Delivery.OPT_SAFE, request(1, "t1"));
        e.optimistic(m);
        assertThat(x.calls).containsExactly("execute 1 null");   // tentative: executed, not committed
        e.viewChanged(view(false, false, 1));
        assertThat(x.calls).containsExactly("execute 1 null", "rollback 1");   // not left open on its backend
        e.viewChanged(view(true, false, 1));   // back, same history: it runs again, and commits once ordered
        e.ordered(m, 1);
        assertThat(x.calls).containsExactly("execute 1 null", "rollback 1", "execute 1 null", "commit 1 null");
        assertThat(e.pending()).isZero();
        assertThat(fatal).isEmpty();
    }
    /** A replica's history marker in memory, logging what the engine does with it into {@code calls}. */
    private static ReplicationEngine.HistoryMarker marker(boolean[] marked, List<String> calls) {
        return new ReplicationEngine.HistoryMarker() {
            @Override public boolean marked() { return marked[0]; }
            @Override public void mark() { calls.add("mark"); marked[0] = true; }
            @Override public void clear() { calls.add("clear"); marked[0] = false; }
        };
    }

    @Test
    void aRestartedReplicaWithoutPositionsThatTookPartInAHistoryStopsWhenItRejoinsUnderAgreedDelivery() throws Exception {
        // engine simulation seed 2062040241439167180: a cut-off sequencer (local-copy) committed GSN 1 and 2 alone,
        // restarted, and joined a primary component that had ordered nothing (first GSN 1): lastGsn 0 proved nothing
        ReplicationEngine e = new ReplicationEngine("c", Delivery.AGREED, new Recording());
        List<String> fatal = new ArrayList<>(), calls = new ArrayList<>();
        e.onFatal(fatal::add);
        e.markHistoryWith(marker(new boolean[]{true}, calls));
        e.viewChanged(view(true, true, 1));
        assertThat(fatal).singleElement().asString().contains("re-entered the primary component").contains("does not record");
        assertThat(e.current()).isFalse();

        // uniform delivery: whatever it delivered, a primary component that continued from a majority holds it too
        ReplicationEngine safe = new ReplicationEngine("c", Delivery.SAFE, new Recording());
        fatal.clear();
        safe.onFatal(fatal::add);
        safe.markHistoryWith(marker(new boolean[]{true}, calls));
        safe.viewChanged(view(true, true, 1));
        assertThat(fatal).isEmpty();
    }

    @Test
    void aNewReplicaJoinsLateMarksItsReplicaBeforeItsFirstDeliveryAndAFoundingOneClearsTheMark() throws Exception {
        Recording x = new Recording();
        ReplicationEngine e = new ReplicationEngine("c", Delivery.AGREED, x);
        List<String> fatal = new ArrayList<>(), calls = new ArrayList<>();
        e.onFatal(fatal::add);
        boolean[] marked = {false};
        e.markHistoryWith(marker(marked, calls));
        e.viewChanged(view(true, true, 1));   // started after the others formed the group: nothing to doubt
        assertThat(fatal).isEmpty();
        assertThat(calls).isEmpty();
        e.ordered(new GcsMessage(new MsgId("a/1", 1), Delivery.AGREED, request(1, "t1")), 1);
        e.ordered(new GcsMessage(new MsgId("a/1", 2), Delivery.AGREED, request(2, "t1")), 2);
        assertThat(calls).containsExactly("mark");   // once, before the first ordered delivery took effect
        assertThat(marked[0]).isTrue();
        assertThat(x.calls).hasSize(4);

        // every site started afresh: the group founds a new history with the replicas as they are
        ReplicationEngine founder = new ReplicationEngine("c", Delivery.AGREED, new Recording());
        calls.clear();
        founder.onFatal(fatal::add);
        founder.markHistoryWith(marker(marked, calls));
        founder.viewChanged(view(true, false, 1));
        assertThat(fatal).isEmpty();
        assertThat(calls).containsExactly("clear");
        assertThat(marked[0]).isFalse();
    }
}
