package org.wanrep.gcs.jgroups;

import org.wanrep.gcs.wan.LatencyMatrix;

import java.util.List;
import java.util.Objects;

/**
 * How one member joins the group.
 *
 * @param cluster       JGroups cluster name
 * @param site          this member's site
 * @param incarnation   distinguishes restarts of a site (member name is {@code site/incarnation})
 * @param sites         configured sites (primary component = majority of these)
 * @param sequencerSite the sequencer sites in order of preference, comma-separated ({@code CoreConfig}); null: the first configured site
 * @param bindHost      address to bind, e.g. 127.0.0.1
 * @param bindPort      JGroups TCP port of this member
 * @param initialHosts  every member's {@code host[port]}, for discovery
 * @param matrix        latency matrix for WAN emulation, or null for none
 * @param jitterMs      uniform jitter added to each delayed message
 * @param ackIntervalMs minimum interval between stability acknowledgements
 * @param mayBootstrap  whether this member may start a new group's history (false when rejoining)
 * @param secretFile    the cluster's shared key ({@link GcsSecret}): traffic between members is encrypted and
 *                      authenticated with it, and a process without it cannot join; null: clear text, no check
 */
public record GcsSettings(String cluster, String site, String incarnation, List<String> sites, String sequencerSite,
                          String bindHost, int bindPort, List<String> initialHosts, LatencyMatrix matrix,
                          double jitterMs, long ackIntervalMs, boolean mayBootstrap, java.nio.file.Path secretFile) {
    /** Without a shared secret (clear text). */
    public GcsSettings(String cluster, String site, String incarnation, List<String> sites, String sequencerSite,
                       String bindHost, int bindPort, List<String> initialHosts, LatencyMatrix matrix,
                       double jitterMs, long ackIntervalMs, boolean mayBootstrap) {
        this(cluster, site, incarnation, sites, sequencerSite, bindHost, bindPort, initialHosts, matrix, jitterMs, ackIntervalMs, mayBootstrap, null);
    }

    public GcsSettings {
        Objects.requireNonNull(site, "site");
        Objects.requireNonNull(sites, "sites");
        if (!sites.contains(site)) throw new IllegalArgumentException("site '" + site + "' is not one of the configured sites " + sites);
        if (matrix != null) for (String s : sites) matrix.indexOf(s);
        if (initialHosts == null || initialHosts.isEmpty()) throw new IllegalArgumentException("no initial hosts for discovery");
    }

    /** A member on loopback; {@code ports.get(i)} is the port of {@code sites.get(i)}. */
    public static GcsSettings loopback(String cluster, String site, List<String> sites, List<Integer> ports, LatencyMatrix matrix) {
        List<String> hosts = new java.util.ArrayList<>();
        for (int p : ports) hosts.add("127.0.0.1[" + p + "]");
        return new GcsSettings(cluster, site, "1", sites, null, "127.0.0.1", ports.get(sites.indexOf(site)), hosts, matrix, 0, 2, true);
    }

    /** Free TCP ports on loopback (each also leaves room for FD_SOCK2 at port+100). */
    public static List<Integer> freePorts(int n) {
        List<Integer> out = new java.util.ArrayList<>();
        java.util.Random r = new java.util.Random();
        // below the kernel's ephemeral range, which any outgoing connection may take before we bind
        // 20000 up to the ephemeral range (PostgreSQL test servers take 10000-19999); never twice in one process
        int low = 20_000, high = Math.max(low + 1000, ephemeralLow() - 101);
        while (out.size() < n) {
            int p = low + r.nextInt(high - low);
            if (out.contains(p) || HANDED_OUT.contains(p) || HANDED_OUT.contains(p + 100) || !free(p) || !free(p + 100)) continue;
            HANDED_OUT.add(p);
            HANDED_OUT.add(p + 100);
            out.add(p);
        }
        return out;
    }

    private static final java.util.Set<Integer> HANDED_OUT = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private static int ephemeralLow() {
        try {
            return Integer.parseInt(java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/sys/net/ipv4/ip_local_port_range")).get(0).trim().split("\\s+")[0]);
        } catch (java.io.IOException | RuntimeException e) {
            return 49152;
        }
    }

    private static boolean free(int port) {
        try (java.net.ServerSocket s = new java.net.ServerSocket()) {
            s.setReuseAddress(false);
            s.bind(new java.net.InetSocketAddress("127.0.0.1", port));
            return true;
        } catch (java.io.IOException e) {
            return false;
        }
    }

    public GcsSettings withJitter(double j) {
        return new GcsSettings(cluster, site, incarnation, sites, sequencerSite, bindHost, bindPort, initialHosts, matrix, j, ackIntervalMs, mayBootstrap, secretFile);
    }

    public GcsSettings withIncarnation(String inc, boolean bootstrap) {
        return new GcsSettings(cluster, site, inc, sites, sequencerSite, bindHost, bindPort, initialHosts, matrix, jitterMs, ackIntervalMs, bootstrap, secretFile);
    }

    public GcsSettings withSequencer(String s) {
        return new GcsSettings(cluster, site, incarnation, sites, s, bindHost, bindPort, initialHosts, matrix, jitterMs, ackIntervalMs, mayBootstrap, secretFile);
    }

    /** Encrypts and authenticates all traffic with the key in this file; null: clear text. */
    public GcsSettings withSecretFile(java.nio.file.Path file) {
        return new GcsSettings(cluster, site, incarnation, sites, sequencerSite, bindHost, bindPort, initialHosts, matrix, jitterMs, ackIntervalMs, mayBootstrap, file);
    }
}
