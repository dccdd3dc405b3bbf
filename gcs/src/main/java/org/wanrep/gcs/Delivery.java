package org.wanrep.gcs;

/** Delivery guarantee of one multicast, in the terms of the Spread toolkit plus the optimistic extension. */
public enum Delivery {
    /** FIFO per sender, no total order; delivered on arrival. Used for write sets. */
    RELIABLE,
    /** Total order (same GSN sequence at every member), not uniform. */
    AGREED,
    /**
     * Total order, delivered only once a majority of the view holds the message (uniform: every member of
     * every later primary view delivers it, in the same place, even if all that delivered it crash).
     */
    SAFE,
    /** Optimistic delivery on arrival, then final delivery exactly like SAFE. */
    OPT_SAFE;

    public boolean ordered() { return this != RELIABLE; }
    public boolean uniform() { return this == SAFE || this == OPT_SAFE; }

    public static Delivery parse(String s) {
        return switch (s.trim().toLowerCase().replace('_', '-')) {
            case "reliable" -> RELIABLE;
            case "agreed" -> AGREED;
            case "safe" -> SAFE;
            case "opt-safe", "optsafe", "opt" -> OPT_SAFE;
            default -> throw new IllegalArgumentException("unknown delivery '" + s + "' (expected reliable, agreed, safe or opt-safe)");
        };
    }

    public String label() { return name().toLowerCase().replace('_', '-'); }
}
