package org.wanrep.txn;

/**
 * The statement by which a replicated transaction records its GSN in the replica, inside its own local
 * transaction (see {@code exec.ReplicaPosition}, which creates the table and the function and reads the
 * position back). Here so that the engine names it without depending on the executors.
 */
public final class PositionSql {
    private PositionSql() {}

    /** A SECURITY DEFINER function: a transaction originating here runs as its client's user. */
    public static final String FUNCTION = "wanrep.record_position";

    /** The row of {@code gsn} ({@code compact}: also forget the rows under {@code doneBelow}, which the new row proves). */
    public static String record(long gsn, long doneBelow, boolean compact) {
        return "SELECT " + FUNCTION + "(" + gsn + ", " + doneBelow + ", " + compact + ")";
    }

    /** A SECURITY DEFINER function marking, inside a certified block's prepared transaction, that the block is here. */
    public static final String CERTIFIED_FUNCTION = "wanrep.record_certified";

    /**
     * Marks certified block {@code id} as committed here, inside its transaction before PREPARE: its GSN is not known
     * yet, so its position cannot record it; after a restart the mark tells that a replayed block is already in the
     * replica ({@code compact}: also forget marks older than a day).
     */
    public static String markCertified(RequestId id, boolean compact) {
        return "SELECT " + CERTIFIED_FUNCTION + "('" + id.toString().replace("'", "''") + "', " + compact + ")";
    }
}
