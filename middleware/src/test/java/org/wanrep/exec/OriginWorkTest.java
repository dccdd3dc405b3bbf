package org.wanrep.exec;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/** The origin's client thread runs its transaction's steps while it waits, and never strands one. */
class OriginWorkTest {
    @Test
    void stepsRunOnTheWaitingThreadUntilDoneAndAreRefusedAfterwards() throws Exception {
        WireTxnExecutor.OriginWork w = new WireTxnExecutor.OriginWork(null, List.of());
        CompletableFuture<Void> done = new CompletableFuture<>();
        AtomicReference<Thread> ranOn = new AtomicReference<>();
        CountDownLatch ran = new CountDownLatch(1);
        Thread client = Thread.ofPlatform().start(() -> {
            try {
                w.runUntil(done);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertThat(w.offer(() -> { ranOn.set(Thread.currentThread()); ran.countDown(); })).isTrue();
        assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(ranOn.get()).isSameAs(client);

        done.complete(null);
        client.join(10_000);
        assertThat(client.isAlive()).isFalse();
        // the client thread has moved on: a late step must go elsewhere (the executor's pool), not wait forever
        assertThat(w.offer(() -> { })).isFalse();
    }

    @Test
    void aStepQueuedBehindDoneStillRuns() throws Exception {
        WireTxnExecutor.OriginWork w = new WireTxnExecutor.OriginWork(null, List.of());
        CompletableFuture<Void> done = CompletableFuture.completedFuture(null);   // DONE is queued first
        CountDownLatch ran = new CountDownLatch(1);
        assertThat(w.offer(ran::countDown)).isTrue();
        w.runUntil(done);
        assertThat(ran.getCount()).isZero();
    }
}
