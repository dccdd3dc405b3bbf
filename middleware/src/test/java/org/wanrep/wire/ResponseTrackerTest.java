package org.wanrep.wire;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** What the tracker expects after errors, as PostgreSQL's skip-till-Sync works. */
class ResponseTrackerTest {
    private static final WireMessage ERROR = new PayloadWriter().int8('S').cstring("ERROR").int8(0).message('E');

    @Test
    void aFailedFlushMakesTheBackendIgnoreAQueryUntilSync() {
        ResponseTracker t = new ResponseTracker();
        // ResourceBoundsTest.protocolFuzz seed 38728568304240: a Flush with a payload, then the proxy's own COMMIT; the
        // session waited for ever for the COMMIT's answer while PostgreSQL waited for a Sync
        t.sent(WireMessage.of('H', new byte[] {1, 2, 3}));
        assertThat(t.idle()).isTrue();
        t.received(ERROR);   // invalid message format
        assertThat(t.skippingToSync()).isTrue();
        t.sent(WireMessage.query("COMMIT"));
        assertThat(t.idle()).as("PostgreSQL ignores the Query until a Sync").isTrue();
        t.sent(Messages.SYNC);
        assertThat(t.idle()).isFalse();
        t.received(Messages.readyForQuery('I'));
        assertThat(t.idle()).isTrue();
        assertThat(t.skippingToSync()).isFalse();
    }

    @Test
    void anErrorInAnExtendedMessageSkipsTheRestUntilSync() {
        ResponseTracker t = new ResponseTracker();
        t.sent(WireMessage.of('P', new byte[0]));
        t.sent(WireMessage.of('B', new byte[0]));
        t.sent(WireMessage.of('E', new byte[0]));
        t.received(ERROR);
        assertThat(t.idle()).isTrue();
        assertThat(t.skippingToSync()).isTrue();
    }
}
