package org.wanrep.gcs;

/** A member of the replication group. */
public interface Gcs extends AutoCloseable {
    /**
     * Multicast to every member, this one included.
     *
     * @throws NotPrimaryException if this member is outside the primary component (ordered deliveries only)
     */
    MsgId multicast(byte[] payload, Delivery delivery);

    /** This member's name ({@code site/incarnation}). */
    String self();

    /** The last view delivered to the listener (null before the first). */
    GcsView view();

    /**
     * Whether this member can be sure, now, that no primary component without it exists: it is in the
     * primary component and holds a read lease every other member renewed recently. A site serves
     * nothing from its replica while this is false (after a pause or a partition it may be stale).
     */
    boolean current();

    /** Callbacks received and not yet handed to the listener (0 if the implementation does not queue them). */
    default int queuedDeliveries() { return 0; }

    @Override void close();
}
