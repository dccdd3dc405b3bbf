package org.wanrep.txn;

/**
 * Runs a transaction's work against this site's replica. Every method returns at once (it must not
 * block: the engine calls it holding its monitor) and reports on any thread when the database answered.
 */
public interface TxnExecutor {
    /**
     * set_config calls lifting statement and lock timeouts for the rest of a transaction: an ordered transaction
     * must not be ended at one site only by a timeout (the client's session's, or a replica's configuration), since
     * the others commit it; timeouts are never shipped.
     */
    String LIFT_TIMEOUTS_SQL = "pg_catalog.set_config('statement_timeout', '0', true), pg_catalog.set_config('lock_timeout', '0', true)";

    /** How an execution ended. */
    enum Outcome {
        OK,
        /** The database refused deterministically (constraint, syntax...): every site refuses alike. */
        ERROR,
        /**
         * A transient refusal that depends on timing at this site (serialization failure 40001,
         * deadlock 40P01, lock not available 55P03, our own cancel 57014): roll back and run again.
         */
        RETRY
    }

    interface Done { void completed(Outcome o); }

    /** SQLSTATEs that mean "run it again", never "the transaction failed". */
    static boolean transientState(String sqlState) {
        return sqlState != null && (sqlState.equals("40001") || sqlState.equals("40P01") || sqlState.equals("55P03") || sqlState.equals("57014"));
    }

    /**
     * BEGIN, then the request's messages, replies buffered. With {@code commit} the executor may
     * send COMMIT in the same round trip and report its outcome from {@link #commit}: the engine
     * passes it only for a final transaction, which nothing can revoke any more. (Deciding later,
     * on the executor's thread, could commit an attempt revoked before its final delivery arrived.)
     */
    void execute(Txn t, boolean commit, Done done);

    /**
     * Interrupts the current attempt of {@code t} (it then reports RETRY or ERROR). The engine follows every cancel
     * with {@link #rollback}, before which no new attempt of {@code t} runs; the sites' executor
     * ({@code exec.WireTxnExecutor}) also stops an attempt that has not started yet (certified blocks under opt-safe
     * need that), {@code exec.JdbcTxnExecutor} (engine tests) only a running statement.
     */
    void cancel(Txn t);

    /** COMMIT; at the origin, then the buffered replies go to the client. May report before it returns. */
    void commit(Txn t, Done done);

    /** ROLLBACK of the current attempt (the transaction may run again later). */
    void rollback(Txn t, Done done);

    /**
     * A digest of what the last attempt of a finished transaction did here (command tags, row counts, SQLSTATE), which
     * every replica that follows the others computes alike; 0 if this executor does not tell.
     */
    default long outcomeDigest(Txn t) { return 0; }

    /** The transaction is over at this site (committed or failed for good): free what it holds. */
    void finish(Txn t);
}
