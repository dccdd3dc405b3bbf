package org.wanrep.txn;

import org.junit.jupiter.api.Test;
import org.wanrep.gcs.Delivery;
import org.wanrep.gcs.GcsView;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** What the engine does with views, without any transaction: pure protocol logic. */
class ReplicationEngineViewTest {
    /** No transaction ever reaches it in these tests. */
    static final TxnExecutor UNUSED = new TxnExecutor() {
        public void execute(Txn t, boolean commit, Done done) { throw new AssertionError("no execution expected"); }
        public void cancel(Txn t) { }
        public void commit(Txn t, Done done) { throw new AssertionError(); }
        public void rollback(Txn t, Done done) { throw new AssertionError(); }
        public void finish(Txn t) { }
    };

    private static GcsView view(boolean joined, long firstGsn) {
        return new GcsView(7, 2, List.of("a/1", "b/1", "c/2"), true, joined, firstGsn, "a/1");
    }

    @Test
    void aMemberThatMissedOrderedTransactionsStops() {
        ReplicationEngine e = new ReplicationEngine("c", Delivery.SAFE, UNUSED);
        List<String> fatal = new ArrayList<>();
        e.onFatal(fatal::add);
        e.viewChanged(view(true, 42));
        assertThat(fatal).singleElement().asString().contains("GSN 42").contains("lacks 41 transactions");
    }

    @Test
    void joiningBeforeAnythingWasOrderedIsHarmless() {
        ReplicationEngine e = new ReplicationEngine("c", Delivery.SAFE, UNUSED);
        List<String> fatal = new ArrayList<>();
        e.onFatal(fatal::add);
        e.viewChanged(view(true, 1));     // a late start of the group: nothing ordered yet
        e.viewChanged(view(false, 1));    // an ordinary view change
        assertThat(fatal).isEmpty();
    }
    /**
     * A member that leaves the primary component is told its undelivered RELIABLE messages. Under symmetric
     * execution those are backlog reports of flow control, never write sets: the site goes on (it stopped,
     * saying it "cannot ship its write set", whenever it left the primary with a report in flight).
     */
    @Test
    void anUndeliveredBacklogReportDoesNotStopASymmetricSite() {
        ReplicationEngine e = new ReplicationEngine("c", Delivery.SAFE, UNUSED);
        List<String> fatal = new ArrayList<>();
        e.onFatal(fatal::add);
        e.undeliverable(new org.wanrep.gcs.MsgId("c/2", 7), Delivery.RELIABLE, "member c/2 is not in the primary component");
        assertThat(fatal).isEmpty();
        assertThat(e.failure()).isNull();
    }
}
