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

    @Override void close();
}
