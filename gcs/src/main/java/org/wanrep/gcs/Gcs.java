package org.wanrep.gcs;

/** A member of the replication group. */
public interface Gcs extends AutoCloseable {
    /**
     * Multicast to every member, this one included.
     *
     * @throws NotPrimaryException if this member is outside the primary component (ordered deliveries only)
     */
    MsgId multicast(byte[] payload, Delivery delivery);

    /**
     * Orders a change of the configured sites (add or remove exactly one): every member switches to
     * {@code sites} at the change's GSN (told by {@link GcsListener#sitesChanged}), then gets
     * {@code payload} as a SAFE ordered delivery at that GSN. A change that no longer adds or removes
     * exactly one site when its turn comes (another change went first) is ignored everywhere.
     *
     * @throws IllegalArgumentException if it does not add or remove exactly one site of {@link #sites()}
     * @throws NotPrimaryException      outside the primary component
     */
    default MsgId changeSites(java.util.List<String> sites, byte[] payload) {
        throw new UnsupportedOperationException("configuration changes are not supported by " + getClass().getSimpleName());
    }

    /** The configured sites after this member's delivered prefix (they decide the primary component). */
    default java.util.List<String> sites() { throw new UnsupportedOperationException(); }

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

    /**
     * The highest GSN this member delivered that a majority of its view holds, so that every later primary
     * component has it (see {@code TotalOrderCore.uniformGsn}); an implementation that delivers nothing
     * before a majority holds it answers its last delivered GSN or more.
     */
    default long uniformGsn() { return Long.MAX_VALUE; }

    /** Callbacks received and not yet handed to the listener (0 if the implementation does not queue them). */
    default int queuedDeliveries() { return 0; }

    @Override void close();
}
