package org.wanrep.gcs.jgroups;

import org.jgroups.Message;
import org.jgroups.protocols.PerDestinationBundler;
import org.jgroups.util.ByteArrayDataOutputStream;

/**
 * JGroups' per-destination bundler, except for the threads that are there to send and may block doing so
 * (the adapter's sender thread, {@link #sendDirectly}): what they send is written to the connections on the
 * spot, without the hand-off to the destination's bundler thread. Everything else (JGroups' own traffic from
 * timers and receiving threads: acknowledgements, retransmissions, heartbeats, credits, views) is queued for
 * the bundler threads as before, so a connection whose peer stopped reading blocks no timer and no receiver.
 * The adapter bundles its multicasts itself, so a direct send loses no bundling worth having.
 */
public class DirectSendBundler extends PerDestinationBundler {
    private static final ThreadLocal<Boolean> DIRECT = ThreadLocal.withInitial(() -> false);

    /** Marks the calling thread: from now on it writes what it sends itself. */
    static void sendDirectly() { DIRECT.set(true); }

    @Override public void send(Message msg) throws Exception {
        if (!DIRECT.get()) {
            super.send(msg);
            return;
        }
        if (msg.getSrc() == null) msg.setSrc(transport.getAddress());
        ByteArrayDataOutputStream out = new ByteArrayDataOutputStream(msg.size() + 64);
        out.growExponentially(true);
        sendSingle(msg.dest(), msg, out);   // loops back to self unless DONT_LOOPBACK, as the bundler threads do
    }
}
