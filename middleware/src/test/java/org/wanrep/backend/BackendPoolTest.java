package org.wanrep.backend;

import org.junit.jupiter.api.Test;
import org.wanrep.pg.LocalPostgres;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;

/** The pool keeps its connections under contention: borrowers that wait get a returned one, none is reopened. */
class BackendPoolTest {
    @Test
    void waitingBorrowersReuseConnectionsInsteadOfOpeningNewOnes() throws Exception {
        try (LocalPostgres pg = LocalPostgres.startTemporary();
             BackendPool pool = new BackendPool(new BackendTarget("127.0.0.1", pg.port(), "postgres", null, pg.dataDir().toString()), 2, Duration.ofSeconds(20))) {
            pool.fill("postgres");
            Set<Integer> pids = ConcurrentHashMap.newKeySet();
            ExecutorService threads = Executors.newFixedThreadPool(6);
            try {
                java.util.List<Future<?>> fs = new java.util.ArrayList<>();
                for (int t = 0; t < 6; t++)
                    fs.add(threads.submit(() -> {
                        for (int i = 0; i < 40; i++) {
                            BackendConnection c = pool.borrow("postgres");
                            pids.add(c.pid());
                            assertThat(c.run("SELECT 1")).isNull();
                            pool.release(c);
                        }
                        return null;
                    }));
                for (Future<?> f : fs) f.get();
            } finally {
                threads.shutdownNow();
            }
            assertThat(pids).as("backend processes used by 240 borrows of a pool of 2").hasSize(2);
        }
    }

    /**
     * A connection given back goes out again at once to a borrower on another thread: the pool must still count every
     * loan. The loan used to end after the connection was back among the idle ones, so a borrower that took it in between
     * lost its loan record, never gave its permit back, and the pool shrank until every borrow timed out.
     */
    @Test
    void loansEndBeforeTheirConnectionGoesOutAgain() throws Exception {
        try (LocalPostgres pg = LocalPostgres.startTemporary();
             BackendPool pool = new BackendPool(new BackendTarget("127.0.0.1", pg.port(), "postgres", null, pg.dataDir().toString()), 2, Duration.ofSeconds(3))) {
            pool.fill("postgres");
            ExecutorService threads = Executors.newFixedThreadPool(8);
            try {
                java.util.List<Future<?>> fs = new java.util.ArrayList<>();
                for (int t = 0; t < 8; t++)
                    fs.add(threads.submit(() -> {
                        for (int i = 0; i < 3000; i++) pool.release(pool.borrow("postgres"));
                        return null;
                    }));
                for (Future<?> f : fs) f.get();
            } finally {
                threads.shutdownNow();
            }
            BackendConnection one = pool.borrow("postgres"), two = pool.borrow("postgres");   // both loans still possible
            assertThat(one).isNotSameAs(two);
            pool.release(one);
            pool.release(two);
        }
    }
}
