package org.wanrep.txn;

import org.junit.jupiter.api.Test;
import org.wanrep.gcs.GcsView;
import org.wanrep.lock.TableSet;
import org.wanrep.txn.ReplicationEngine.LeftPrepared;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which prepared transactions of an earlier incarnation are rolled back, and when: never by guess, only once the
 * total order shows their block was never ordered (its member left without a CERTIFY for it), or when a copy
 * replaces the replica. The resolver records what PostgreSQL would be told (the sites' tests run it for real).
 */
class LeftoverBlocksTest {
    private final List<String> resolved = Collections.synchronizedList(new ArrayList<>());
    private final List<String> failures = Collections.synchronizedList(new ArrayList<>());
    private final LeftoverBlocks left = new LeftoverBlocks("a", failures::add);

    private static final RequestId ONE = new RequestId("a", 1), TWO = new RequestId("a", 2), THREE = new RequestId("a", 3);

    private static LeftPrepared prepared(RequestId id, String member) { return new LeftPrepared(id, "wanrep:" + id + "@" + member, "db", member); }

    private static GcsView view(String... members) { return new GcsView(9, 3, List.of(members), true, true, 100, members[0]); }

    private void recover() {
        left.recover(List.of(THREE), List.of(prepared(ONE, "a/1"), prepared(TWO, "a/2")),
                (db, gid, commit) -> resolved.add((commit ? "commit " : "rollback ") + gid));
    }

    @Test void aCertifyTakesWhatIsLeftOfItsBlockOnce() {
        recover();
        assertThat(left.take(THREE)).isEqualTo(new LeftoverBlocks.Found(null, true));
        assertThat(left.take(THREE)).isEqualTo(new LeftoverBlocks.Found(null, false));
        assertThat(left.take(ONE).prepared()).isEqualTo(prepared(ONE, "a/1"));
        assertThat(left.size()).isEqualTo(1);
        assertThat(resolved).isEmpty();   // taking decides nothing: the certification does
    }

    @Test void onlyTheMembersThatLeftTheViewHadTheirBlocksNeverOrdered() throws InterruptedException {
        recover();
        left.resolveNeverOrdered(view("a/2", "b/1", "c/1"));   // a/1 is gone: its block was never ordered; a/2's may still be
        long deadline = System.nanoTime() + 10_000_000_000L;   // resolved on a thread of its own
        while (resolved.isEmpty() && System.nanoTime() < deadline) Thread.sleep(10);
        Thread.sleep(50);   // and nothing more follows
        assertThat(resolved).containsExactly("rollback " + prepared(ONE, "a/1").gid());
        assertThat(left.size()).isEqualTo(1);
        assertThat(failures).isEmpty();
    }

    @Test void aReplayRollsBackWhatItsLogNeverOrderedAndLeavesWhatItDecides() throws Exception {
        recover();
        // the log to replay: a view without a/1, then TWO's CERTIFY (decided in its turn when replayed)
        byte[] certifyTwo = TxnRequestCodec.encode(TxnRequest.certify(TWO, TableSet.allTables(), "db", List.of(), 0, 0, Map.of(), 5));
        List<OrderedLog.Entry> log = List.of(new OrderedLog.Entry(10, null, 0, null, List.of("a/2", "b/1")),
                new OrderedLog.Entry(11, "a/2", 7, certifyTwo, null));
        ReplicationEngine.CatchUpSource source = (v, from, to, max) -> log.stream().filter(e -> e.isView() || e.gsn() >= from).toList();
        RequestId four = new RequestId("a", 4);   // its member is still in every view: its CERTIFY may yet come
        left.recover(List.of(), List.of(prepared(four, "b/1")), (db, gid, commit) -> resolved.add((commit ? "commit " : "rollback ") + gid));
        left.rollBackUnordered(view("a/1", "a/2", "b/1"), source, 10, 11);
        assertThat(resolved).containsExactly("rollback " + prepared(ONE, "a/1").gid());
        assertThat(left.take(TWO).prepared()).isNotNull();
        assertThat(left.take(four).prepared()).isNotNull();
    }

    @Test void aCopyReplacingTheReplicaRollsBackEverythingLeft() throws Exception {
        recover();
        left.rollBackAll();
        assertThat(resolved).containsExactlyInAnyOrder("rollback " + prepared(ONE, "a/1").gid(), "rollback " + prepared(TWO, "a/2").gid());
        assertThat(left.size()).isZero();
        assertThat(left.take(THREE).committed()).isFalse();   // the copy has its outcome: the mark means nothing any more
    }
}
