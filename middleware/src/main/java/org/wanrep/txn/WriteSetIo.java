package org.wanrep.txn;

/**
 * The engine's I/O for write-set policies, so that the protocol logic stays apart from capture,
 * apply and the group. Methods return at once (the engine calls them holding its monitor) and
 * report on any thread.
 */
public interface WriteSetIo {
    /**
     * This site executed {@code t} for everyone and it ended (committed, or failed deterministically:
     * the executor's work says which): capture its write set and multicast a {@link WriteSetMessage}
     * with RELIABLE delivery. A transaction committed here that cannot be shipped leaves this replica
     * ahead of the others: the implementation must then stop the site (the others re-execute it).
     */
    void ship(Txn t);

    /**
     * Applies {@code m}'s write set and sequence values to this replica in one local transaction, committed; with
     * {@code t.recordSql()} (symmetric execution records every GSN in the replica) that statement runs in it too.
     */
    void apply(Txn t, WriteSetMessage m, TxnExecutor.Done done);

    /** No write-set policy configured. */
    WriteSetIo NONE = new WriteSetIo() {
        @Override public void ship(Txn t) { throw new IllegalStateException("no write-set replication configured"); }
        @Override public void apply(Txn t, WriteSetMessage m, TxnExecutor.Done done) { throw new IllegalStateException("no write-set replication configured"); }
    };
}
