package org.wanrep.txn;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.wanrep.gcs.GcsView;
import org.wanrep.txn.ReplicationEngine.CatchUpSource;
import org.wanrep.txn.ReplicationEngine.LeftPrepared;
import org.wanrep.txn.ReplicationEngine.PreparedResolver;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * What certified blocks of this site's earlier incarnation left in its replica: the marks of those it committed as
 * their origin (a replay must not run them again) and the transactions it prepared and never saw decided. The total
 * order decides each prepared one: its CERTIFY, delivered again, commits or rolls it back in its turn; one whose member
 * left the group without it being ordered never will be, and is rolled back; a state transfer replaces the replica,
 * so everything left is rolled back first. Nothing is resolved by guess. Its own monitor, taken inside the engine's and
 * never the other way round; resolutions run without it.
 */
final class LeftoverBlocks {
    private static final Logger LOG = LoggerFactory.getLogger(LeftoverBlocks.class);

    private final String site;
    /** Stops the site (the engine's fail): a resolution that failed leaves the replica unknown. */
    private final Consumer<String> fail;
    /** Certified blocks this site committed as their origin before it restarted (marked in the replica). */
    private final Set<RequestId> committed = new HashSet<>();
    /** Prepared transactions left by an earlier incarnation, by block. */
    private final Map<RequestId, LeftPrepared> prepared = new LinkedHashMap<>();
    private volatile PreparedResolver resolver;

    LeftoverBlocks(String site, Consumer<String> fail) {
        this.site = site;
        this.fail = fail;
    }

    /** What the replica holds (read at start, before the member joins). */
    synchronized void recover(Collection<RequestId> committedIds, Collection<LeftPrepared> left, PreparedResolver r) {
        committed.addAll(committedIds);
        for (LeftPrepared p : left) prepared.put(p.id(), p);
        resolver = r;
        if (!left.isEmpty()) LOG.info("site {}: {} prepared transaction(s) of certified blocks left in the replica, resolved from the total order: {}",
                site, left.size(), left.stream().map(LeftPrepared::gid).toList());
    }

    /** What block {@code id}'s CERTIFY, delivered now, finds left of it: its prepared transaction (or null), whether it is marked committed. */
    record Found(LeftPrepared prepared, boolean committed) {}

    /** Takes what is left of block {@code id} (its CERTIFY is being decided: nothing of it is left afterwards). */
    synchronized Found take(RequestId id) {
        return new Found(prepared.remove(id), committed.remove(id));
    }

    /** Prepared transactions not yet resolved. */
    synchronized int size() { return prepared.size(); }

    /**
     * Before a replay of GSNs {@code from} to {@code target}: a prepared transaction whose CERTIFY is not among them, and
     * whose member left the group by then (a later view of the log, or {@code v}, lacks it), was never ordered and never
     * will be. It is rolled back now: it holds its rows, and a replayed transaction that needs them would wait in
     * PostgreSQL for ever. One whose CERTIFY is there is decided in its turn.
     */
    void rollBackUnordered(GcsView v, CatchUpSource source, long from, long target) throws Exception {
        Set<RequestId> ids;
        List<LeftPrepared> all;
        synchronized (this) {
            if (prepared.isEmpty()) return;
            ids = new HashSet<>(prepared.keySet());
            all = new ArrayList<>(prepared.values());
        }
        Set<String> left = new HashSet<>();
        for (LeftPrepared p : all) if (!v.members().contains(p.member())) left.add(p.member());
        // a gap in the logs: the replay fails on it and stops the site
        source.scan(v, from, target, e -> {
            if (e.isView()) {
                for (LeftPrepared p : all) if (!e.members().contains(p.member())) left.add(p.member());
            } else {
                TxnRequest r = TxnRequestCodec.decode(e.payload());
                if (r.kind() == TxnRequest.Kind.CERTIFY) ids.remove(r.id());
            }
        });
        List<LeftPrepared> never = new ArrayList<>();
        synchronized (this) {
            for (RequestId id : ids) {
                LeftPrepared p = prepared.get(id);
                if (p != null && left.contains(p.member())) never.add(prepared.remove(id));
            }
        }
        for (LeftPrepared p : never) {
            resolver.resolve(p.database(), p.gid(), false);
            LOG.info("site {}: prepared transaction {} rolled back: its block was never ordered", site, p.gid());
        }
    }

    /**
     * A state transfer replaces the replica: the copy has the outcome of every block left here (or the log replays them
     * as any other site's), and a prepared transaction would keep its database from being dropped. So they are rolled
     * back first, and the marks of committed ones mean nothing any more.
     */
    void rollBackAll() throws Exception {
        List<LeftPrepared> all;
        synchronized (this) {
            all = new ArrayList<>(prepared.values());
            prepared.clear();
            committed.clear();
        }
        for (LeftPrepared p : all) {
            resolver.resolve(p.database(), p.gid(), false);
            LOG.info("site {}: prepared transaction {} rolled back before the state transfer that replaces its replica", site, p.gid());
        }
    }

    /**
     * In a primary view, after every delivery before it: a prepared transaction whose member (an earlier incarnation of
     * this site) is not in the view was never ordered and never will be (a member's messages are delivered before the
     * view that excludes it, or not at all), so it is rolled back; its client never had an answer.
     */
    synchronized void resolveNeverOrdered(GcsView v) {
        for (var it = prepared.values().iterator(); it.hasNext(); ) {
            LeftPrepared p = it.next();
            if (v.members().contains(p.member())) continue;
            it.remove();
            resolveNow(p, false, "its block was never ordered");
        }
    }

    /** Resolves a prepared transaction at once, on a thread of its own, outside the lock order (a rollback waits for nothing). */
    void resolveNow(LeftPrepared p, boolean commit, String why) {
        PreparedResolver r = resolver;
        Thread.ofPlatform().name("wanrep-resolve-" + site).start(() -> {
            try {
                r.resolve(p.database(), p.gid(), commit);
                LOG.info("site {}: prepared transaction {} {} ({})", site, p.gid(), commit ? "committed" : "rolled back", why);
            } catch (Exception e) {
                fail.accept("site " + site + " could not " + (commit ? "commit" : "roll back") + " prepared transaction " + p.gid() + " (" + why + "): " + e.getMessage());
            }
        });
    }
}
