package org.wanrep.gcs.jgroups;

import org.junit.jupiter.api.Test;
import org.wanrep.gcs.Delivery;
import org.wanrep.gcs.GcsListener;
import org.wanrep.gcs.GcsMessage;
import org.wanrep.gcs.GcsView;
import org.wanrep.gcs.MsgId;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** A delivery the listener fails on is never skipped: that member stops delivering and reports it (real JGroups). */
class DeliveryFailStopTest {
    private static final List<String> SITES = List.of("a", "b", "c");

    /** Site b's listener throws on the ordered message with GSN 3. */
    private static GcsListener failingAtThird(String site, TestGroup.Recorder r) {
        if (!site.equals("b")) return r;
        return new GcsListener() {
            @Override public void optimistic(GcsMessage m) { r.optimistic(m); }
            @Override public void ordered(GcsMessage m, long gsn) {
                if (gsn == 3) throw new IllegalStateException("engine failed on " + m.id());
                r.ordered(m, gsn);
            }
            @Override public void reliable(GcsMessage m) { r.reliable(m); }
            @Override public void viewChanged(GcsView v) { r.viewChanged(v); }
            @Override public void undeliverable(MsgId id, Delivery d, String reason) { r.undeliverable(id, d, reason); }
        };
    }

    private static void sendTen(TestGroup g) {
        for (int i = 0; i < 10; i++) g.member("a").multicast(new byte[]{(byte) i}, Delivery.AGREED);
    }

    @Test
    void theFirstListenerFailureStopsDeliveryAndReachesTheFatalHandler() throws Exception {
        try (TestGroup g = new TestGroup(SITES, null).start(null, DeliveryFailStopTest::failingAtThird)) {
            CompletableFuture<String> fatal = new CompletableFuture<>();
            g.member("b").onFatal(fatal::complete);
            sendTen(g);
            g.awaitOrdered(List.of("a", "c"), 10, Duration.ofSeconds(20));
            assertThat(fatal.get(10, TimeUnit.SECONDS)).contains("engine failed on");
            Thread.sleep(300);
            // b skipped nothing: it has the two before the failure and none after
            assertThat(g.recorders.get("b").ordered).hasSize(2);
            assertThat(g.member("b").failure()).isNotNull();
        }
    }

    @Test
    void aFailureBeforeAHandlerIsRegisteredIsReportedOnRegistration() throws Exception {
        try (TestGroup g = new TestGroup(SITES, null).start(null, DeliveryFailStopTest::failingAtThird)) {
            sendTen(g);
            g.awaitOrdered(List.of("a", "c"), 10, Duration.ofSeconds(20));
            long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (g.member("b").failure() == null && System.nanoTime() < end) Thread.sleep(10);
            assertThat(g.recorders.get("b").ordered).hasSize(2);
            List<String> reported = new ArrayList<>();
            g.member("b").onFatal(reported::add);
            assertThat(reported).singleElement().asString().contains("engine failed on");
            g.member("b").onFatal(reported::add);   // reported once only
            assertThat(reported).hasSize(1);
        }
    }
}
