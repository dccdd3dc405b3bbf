package org.wanrep.gcs.jgroups;

import org.jgroups.Address;
import org.jgroups.Message;
import org.jgroups.ObjectMessage;
import org.jgroups.stack.Protocol;
import org.jgroups.util.MessageBatch;
import org.jgroups.util.UUID;
import org.junit.jupiter.api.Test;
import org.wanrep.gcs.wan.LatencyMatrix;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

class WanDelayTest {
    @Test void aBatchWhoseFirstSlotIsEmptyIsDelayedNotDropped() throws Exception {
        LatencyMatrix na4 = LatencyMatrix.load("na4");
        WAN_DELAY montreal = new WAN_DELAY().configure(na4, "montreal", 0), boston = new WAN_DELAY().configure(na4, "boston", 0);
        List<Message> up = new CopyOnWriteArrayList<>();
        boston.setUpProtocol(new Protocol() {
            @Override public Object up(Message msg) { up.add(msg); return null; }
            @Override public void up(MessageBatch batch) { for (Message m : batch) up.add(m); }
        });
        montreal.setDownProtocol(new Protocol() {
            @Override public Object down(Message msg) { return null; }
        });
        Address sender = UUID.randomUUID();
        Message gone = new ObjectMessage(null, "gone").setSrc(sender), kept = new ObjectMessage(null, "kept").setSrc(sender);
        montreal.down(gone);
        montreal.down(kept);   // stamps the sender's site
        MessageBatch batch = new MessageBatch(4).sender(sender).add(gone).add(kept);
        batch.removeIf(m -> m == gone, true);   // a lower layer took the first one: its slot is left empty
        assertThat(batch.size()).isEqualTo(1);

        boston.up(batch);
        for (long end = System.nanoTime() + 2_000_000_000L; up.isEmpty() && System.nanoTime() < end; ) Thread.onSpinWait();
        assertThat((String) up.get(0).getObject()).isEqualTo("kept");
        boston.stop();
    }
    /**
     * A cut-off site's messages are all dropped, in a batch too (the fault injection removed only a batch's
     * first one: heartbeats came through, the failure detector never suspected the cut-off site, and a
     * "partitioned" site stayed in the view while its traffic was half lost).
     */
    @Test void everyMessageOfACutOffSiteInABatchIsDropped() throws Exception {
        WAN_DELAY boston = new WAN_DELAY().configure(null, "boston", 0);
        List<Message> up = new CopyOnWriteArrayList<>();
        boston.setUpProtocol(new Protocol() {
            @Override public Object up(Message msg) { up.add(msg); return null; }
            @Override public void up(MessageBatch batch) { for (Message m : batch) up.add(m); }
        });
        Address montreal = UUID.randomUUID();
        org.jgroups.util.NameCache.add(montreal, "montreal/1");
        boston.partitionFrom(java.util.Set.of("montreal"));
        MessageBatch batch = new MessageBatch(4).sender(montreal);
        for (int i = 0; i < 4; i++) batch.add(new ObjectMessage(null, "m" + i).setSrc(montreal));
        boston.up(batch);
        boston.up(new ObjectMessage(null, "single").setSrc(montreal));
        assertThat(up).isEmpty();
        boston.partitionFrom(java.util.Set.of());   // healed
        boston.up(new ObjectMessage(null, "after").setSrc(montreal));
        assertThat(up).extracting(m -> (String) m.getObject()).containsExactly("after");
    }
}
