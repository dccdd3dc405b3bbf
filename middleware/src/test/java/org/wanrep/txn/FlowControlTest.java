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
}
