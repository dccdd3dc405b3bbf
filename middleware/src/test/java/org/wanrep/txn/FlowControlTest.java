package org.wanrep.txn;

import org.junit.jupiter.api.Test;
import org.wanrep.gcs.GcsView;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The throttle decision and the bounded wait, without a group. */
class FlowControlTest {
    private static GcsView view(boolean primary, String... members) {
        return new GcsView(1, 1, List.of(members), primary, false, 1, members[0]);
    }

    @Test
    void anyMemberOfThePrimaryViewOverTheLimitHoldsUpdatesBack() {
        FlowControl f = new FlowControl("a", 10, 1000, 10);
        f.report("a-1", "a", 3);
        f.report("b-1", "b", 10);
        assertThat(f.overLimit(view(true, "a-1", "b-1", "c-1"))).as("at the limit is not over it").isEmpty();
        f.report("c-1", "c", 11);
        assertThat(f.overLimit(view(true, "a-1", "b-1", "c-1"))).isEqualTo("c (11)");
        assertThat(f.overLimit(view(true, "a-1", "b-1"))).as("a member outside the view does not count").isEmpty();
        assertThat(f.overLimit(view(false, "a-1", "b-1", "c-1"))).as("outside the primary component ordering fails anyway").isEmpty();
        assertThat(new FlowControl("a", 0, 1000, 10).overLimit(view(true, "c-1"))).as("0 turns it off").isEmpty();
        f.report("c-1", "c", 2);
        assertThat(f.overLimit(view(true, "a-1", "b-1", "c-1"))).isEmpty();
    }

    @Test
    void anUpdateWaitsUntilTheBacklogDrainsAndNoLongerThanTheTimeout() throws Exception {
        FlowControl f = new FlowControl("a", 5, 60_000, 10);
        GcsView v = view(true, "a-1", "b-1");
        f.report("b-1", "b", 6);
        CompletableFuture<Void> admitted = CompletableFuture.runAsync(() -> {
            try {
                f.admit(() -> v);
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        });
        Thread.sleep(300);
        assertThat(admitted).as("held back while b is over the limit").isNotDone();
        f.report("b-1", "b", 5);
        admitted.get(5, TimeUnit.SECONDS);

        FlowControl shortWait = new FlowControl("a", 5, 200, 10);
        shortWait.report("b-1", "b", 100);
        long t0 = System.nanoTime();
        assertThatThrownBy(() -> shortWait.admit(() -> v)).isInstanceOf(FlowControl.Throttled.class)
                .hasMessageContaining("b (100)").satisfies(e -> assertThat(((FlowControl.Throttled) e).sqlState()).isEqualTo("53400"));
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).isBetween(150L, 5_000L);
    }

    @Test
    void reportsAreToldApartFromWriteSets() {
        assertThat(FlowControl.isReport(FlowControl.encode("boston", 42))).isTrue();
        assertThat(FlowControl.isReport(new byte[] {1, 0, 6, 'b'})).as("a write set starts with its codec version").isFalse();
    }
    @Test
    void aBacklogOfManyBytesHoldsUpdatesBackToo() {
        FlowControl f = new FlowControl("a", 1000, 64L << 20, 1000, 10);
        f.report("b-1", "b", 3, 64L << 20, 0, 0);
        assertThat(f.overLimit(view(true, "a-1", "b-1"))).as("at the limit is not over it").isEmpty();
        f.report("b-1", "b", 3, (64L << 20) + 1, 0, 0);
        assertThat(f.overLimit(view(true, "a-1", "b-1"))).isEqualTo("b (3 transactions, 64 MB)");
        assertThat(f.over(f.reports().get("b-1"))).isEqualTo("flow.max_backlog_mb");
        f.report("b-1", "b", 1001, 10, 0, 0);
        assertThat(f.over(f.reports().get("b-1"))).isEqualTo("flow.max_backlog");
        assertThat(new FlowControl("a", 1000, 0, 1000, 10).overLimit(view(true, "c-1"))).isEmpty();
        FlowControl noBytes = new FlowControl("a", 1000, 0, 1000, 10);
        noBytes.report("b-1", "b", 3, Long.MAX_VALUE, 0, 0);
        assertThat(noBytes.overLimit(view(true, "a-1", "b-1"))).as("0: no byte limit").isEmpty();
        FlowControl off = new FlowControl("a", 0, 1, 1000, 10);
        off.report("b-1", "b", 3, 100, 0, 0);
        assertThat(off.overLimit(view(true, "a-1", "b-1"))).as("flow control off").isEmpty();
    }

    @Test
    void aReportCarriesTheBacklogsBytesAndLag() {
        FlowControl f = new FlowControl("a", 1000, 1 << 20, 1000, 10);
        f.received(new org.wanrep.gcs.GcsMessage(new org.wanrep.gcs.MsgId("b-1", 1), org.wanrep.gcs.Delivery.RELIABLE,
                FlowControl.encode("b", 7, 5L << 20, 12, 340)));
        FlowControl.Report r = f.reports().get("b-1");
        assertThat(r.site()).isEqualTo("b");
        assertThat(r.backlog()).isEqualTo(7);
        assertThat(r.bytes()).isEqualTo(5L << 20);
        assertThat(r.lag()).isEqualTo(12);
        assertThat(r.done()).isEqualTo(340);
        assertThat(f.overLimit(view(true, "a-1", "b-1"))).isEqualTo("b (7 transactions, 5 MB)");
    }
}
