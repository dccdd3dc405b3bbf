package org.wanrep.gcs.jgroups;

/**
 * The JGroups stack wanrep runs on (see FACTS.md): TCP, the WAN delay right above it, TCPPING,
 * failure detection, reliable FIFO multicast and unicast, membership, flow control, fragmentation.
 * The total-order protocol runs on top of the channel ({@link JGroupsGcs}). Every listener binds the
 * configured address only (FD_SOCK2 would take all interfaces otherwise). With a shared secret,
 * {@link GcsSecret#install} adds encryption right above WAN_DELAY.
 *
 * <p>The transport's threads are platform threads, a receiving connection's thread hands each message to
 * {@link WanDelayPolicy} (which holds it for its link's delay and passes it up from the link's lane, whatever
 * is due as one batch), and {@link DirectSendBundler} lets the adapter's sender thread write to the
 * connections itself. Per received message that is one thread hand-off where JGroups' defaults (virtual
 * threads, the I/O poller, a pool thread per sender, then the lane) took three or four.
 */
final class StackXml {
    private StackXml() {}

    static String build(GcsSettings s) {
        return """
            <config xmlns="urn:org:jgroups">
              <TCP bind_addr="%1$s" bind_port="%2$d" port_range="0" tcp_nodelay="true"
                   sock_conn_timeout="1s" diag.enabled="false"
                   thread_pool.min_threads="0" thread_pool.max_threads="200"
                   message_processing_policy="org.wanrep.gcs.jgroups.WanDelayPolicy"
                   bundler_type="org.wanrep.gcs.jgroups.DirectSendBundler" use_virtual_threads="false"/>
              <org.wanrep.gcs.jgroups.WAN_DELAY/>
              <TCPPING initial_hosts="%3$s" port_range="0" async_discovery="true" num_discovery_runs="3"/>
              <MERGE3 min_interval="500" max_interval="1500"/>
              <FD_SOCK2 bind_addr="%1$s"/>
              <FD_ALL3 timeout="8s" interval="1s"/>
              <VERIFY_SUSPECT2 timeout="1s"/>
              <BARRIER/>
              <pbcast.NAKACK2 use_mcast_xmit="false" xmit_interval="200"/>
              <UNICAST3 xmit_interval="200"/>
              <pbcast.STABLE desired_avg_gossip="5s" max_bytes="8M"/>
              <pbcast.GMS print_local_addr="false" join_timeout="%4$d" view_ack_collection_timeout="%4$d"/>
              <UFC max_credits="8M" min_threshold="0.4"/>
              <MFC max_credits="8M" min_threshold="0.4"/>
              <FRAG4 frag_size="60000"/>
            </config>
            """.formatted(s.bindHost(), s.bindPort(), String.join(",", s.initialHosts()), membershipTimeoutMs(s));
    }

    /**
     * How long a starting member looks for a coordinator before it becomes one, and how long a coordinator waits
     * for the members' acknowledgements of a new view: 500 ms plus four one-way delays of the emulated matrix's
     * slowest link (and its jitter). With 1.5 s and JGroups' 2 s, three sites started side by side took 2-4 s
     * longer than needed: a starting member looked for a coordinator that did not exist yet, then a coordinator
     * waited for a view acknowledgement that did not come. Both bound waits, not safety: too short on a slow real
     * WAN, two starting members may each form a group of their own, which MERGE3 merges within a few seconds (its
     * interval is short for that reason), or a view is installed before every member acknowledged it.
     */
    static int membershipTimeoutMs(GcsSettings s) {
        double slowest = 0;
        if (s.matrix() != null)
            for (String from : s.sites()) if (s.matrix().contains(from)) slowest = Math.max(slowest, s.matrix().maxFrom(from) + s.jitterMs());
        return 500 + (int) Math.ceil(4 * slowest);
    }
}
