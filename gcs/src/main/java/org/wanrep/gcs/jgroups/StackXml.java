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
              <TCPPING initial_hosts="%3$s" port_range="0" async_discovery="true"/>
              <MERGE3 min_interval="2s" max_interval="5s"/>
              <FD_SOCK2 bind_addr="%1$s"/>
              <FD_ALL3 timeout="8s" interval="1s"/>
              <VERIFY_SUSPECT2 timeout="1s"/>
              <BARRIER/>
              <pbcast.NAKACK2 use_mcast_xmit="false" xmit_interval="200"/>
              <UNICAST3 xmit_interval="200"/>
              <pbcast.STABLE desired_avg_gossip="5s" max_bytes="8M"/>
              <pbcast.GMS print_local_addr="false" join_timeout="1500"/>
              <UFC max_credits="8M" min_threshold="0.4"/>
              <MFC max_credits="8M" min_threshold="0.4"/>
              <FRAG4 frag_size="60000"/>
            </config>
            """.formatted(s.bindHost(), s.bindPort(), String.join(",", s.initialHosts()));
    }
}
