package org.wanrep.gcs;

/**
 * Callbacks of the group. They are called from one thread per member, in protocol order, and must
 * not block for long: they hold up the member's protocol.
 */
public interface GcsListener {
    /** An OPT_SAFE message on arrival, before its final position is known; at most once, before {@link #ordered}. */
    default void optimistic(GcsMessage m) {}

    /**
     * Final delivery of an AGREED, SAFE or OPT_SAFE message at global sequence number {@code gsn}.
     * GSNs are consecutive. Normally a primary view precedes them; a member that accepted a new group's
     * first flush but missed its commit receives that epoch's messages (from GSN 1) in the next flush,
     * before its first view.
     */
    void ordered(GcsMessage m, long gsn);

    /** A RELIABLE (FIFO, unordered) message. */
    default void reliable(GcsMessage m) {}

    /** A new view. Delivered after every final delivery of the previous view. */
    default void viewChanged(GcsView view) {}

    /**
     * One of this member's multicasts will never be delivered: the member left the primary component
     * before the message was ordered. The application must treat the request as failed.
     */
    default void undeliverable(MsgId id, Delivery delivery, String reason) {}

    /**
     * The configured sites are now {@code sites}, from the configuration change ordered at {@code gsn}
     * (called before that change's own {@link #ordered} delivery), or, for a member that entered the
     * primary component without the history (a joiner), the set in force when it joined (before its view).
     */
    default void sitesChanged(java.util.List<String> sites, long gsn) {}
}
