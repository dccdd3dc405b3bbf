package org.wanrep.txn;

import org.wanrep.gcs.MsgId;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * What the sites' small RELIABLE reports (flow control's backlogs, the audit's outcome digests) share: a magic number
 * that tells each kind apart from write sets (whose first byte is their codec version), and the bounded set of a
 * member's own reports still in flight, whose loss gcs reports at a view change and the listener drops as harmless.
 */
final class GroupReports {
    private GroupReports() {}

    /** Whether {@code payload} starts with {@code magic} (big-endian). */
    static boolean startsWith(byte[] payload, int magic) {
        return payload.length >= 4 && ((payload[0] & 0xff) << 24 | (payload[1] & 0xff) << 16 | (payload[2] & 0xff) << 8 | (payload[3] & 0xff)) == magic;
    }

    /** A thread-safe set of the last 4096 report ids sent. */
    static Set<MsgId> sentIds() {
        return Collections.synchronizedSet(Collections.newSetFromMap(new LinkedHashMap<MsgId, Boolean>() {
            @Override protected boolean removeEldestEntry(Map.Entry<MsgId, Boolean> e) { return size() > 4096; }
        }));
    }
}
