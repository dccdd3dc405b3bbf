package org.wanrep.gcs.core;

import java.util.List;

/**
 * Settings of the total-order core, sealed at construction.
 *
 * @param sites         the configured sites; a view is primary when it holds more than half of them
 * @param sequencerSite the sites whose member leads every flush and orders, comma-separated in order of preference
 *                      ("a" or "a,b,c"; null or blank: the first site of {@code sites}). Static, the same at every
 *                      member: it need not name current sites (the sequencer's site may have been removed)
 * @param ackIntervalMs minimum interval between two stability acknowledgements of one member
 * @param maxOrderBatch the sequencer sends an ORDER message at the latest when this many messages wait
 * @param mayBootstrap  whether this member may form a new group's first primary view; false for a new
 *                      incarnation joining a group that has history (it must never start a second one)
 * @param heartbeatMs   an acknowledgement goes out at least this often, traffic or not (it carries the lease)
 * @param leaseMs       how long after a stamp every other member echoed this member may still take its
 *                      replica as current; must stay well below the failure detector's timeout
 */
public record CoreConfig(List<String> sites, String sequencerSite, long ackIntervalMs, int maxOrderBatch,
                         boolean mayBootstrap, long heartbeatMs, long leaseMs) {
    /** Default lease timing for a failure detector that suspects after 8 s (the JGroups stack's FD_ALL3). */
    public static final long DEFAULT_HEARTBEAT_MS = 500, DEFAULT_LEASE_MS = 4000;

    public CoreConfig(List<String> sites, String sequencerSite, long ackIntervalMs, int maxOrderBatch, boolean mayBootstrap) {
        this(sites, sequencerSite, ackIntervalMs, maxOrderBatch, mayBootstrap, DEFAULT_HEARTBEAT_MS, DEFAULT_LEASE_MS);
    }

    public CoreConfig {
        if (sites == null || sites.isEmpty()) throw new IllegalArgumentException("no sites configured");
        sites = List.copyOf(sites);
        if (sequencerSite == null || sequencerSite.isBlank()) sequencerSite = sites.get(0);
        // not checked against the sites: a member restarted after the sequencer's site was removed must still
        // name the leader the running members name (TotalOrderCore.sequencerOf), so the setting outlives the site
        sequencerSite = String.join(",", parseSites(sequencerSite));
        if (ackIntervalMs < 0) throw new IllegalArgumentException("ackIntervalMs < 0");
        if (maxOrderBatch < 1) throw new IllegalArgumentException("maxOrderBatch < 1");
        if (heartbeatMs < 1 || leaseMs <= heartbeatMs) throw new IllegalArgumentException("need 0 < heartbeatMs < leaseMs");
    }

    /** The sequencer sites in order of preference. */
    public List<String> sequencerSites() { return parseSites(sequencerSite); }

    private static List<String> parseSites(String list) {
        List<String> out = new java.util.ArrayList<>();
        for (String s : list.split(",")) {
            String t = s.trim();
            if (t.isEmpty() || t.contains("/")) throw new IllegalArgumentException("bad sequencer site list '" + list + "'");
            if (out.contains(t)) throw new IllegalArgumentException("sequencer site list '" + list + "' names " + t + " twice");
            out.add(t);
        }
        return List.copyOf(out);
    }

    public static CoreConfig of(List<String> sites) { return new CoreConfig(sites, null, 2, 500, true); }

    public CoreConfig withBootstrap(boolean b) { return new CoreConfig(sites, sequencerSite, ackIntervalMs, maxOrderBatch, b, heartbeatMs, leaseMs); }
}
