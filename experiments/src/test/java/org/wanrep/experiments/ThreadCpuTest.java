package org.wanrep.experiments;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class ThreadCpuTest {
    @Test
    void groupsByNameWithoutDigitsAndCountsNewThreadsFromZero() {
        Map<Long, ThreadCpu.Sample> before = Map.of(
                1L, new ThreadCpu.Sample("wanrep-exec-1", 10_000, 5),
                2L, new ThreadCpu.Sample("wanrep-exec-2", 20_000, 7),
                3L, new ThreadCpu.Sample("gcs-send-a/12", 0, 1));
        Map<Long, ThreadCpu.Sample> after = Map.of(
                1L, new ThreadCpu.Sample("wanrep-exec-1", 50_000, 15),
                2L, new ThreadCpu.Sample("wanrep-exec-2", 20_000, 9),
                3L, new ThreadCpu.Sample("gcs-send-a/12", 0, 1),   // did nothing: left out
                4L, new ThreadCpu.Sample("wanrep-client", 30_000, 6),   // new: from zero
                5L, new ThreadCpu.Sample("other", 0, 3));
        Map<String, ThreadCpu.Growth> g = ThreadCpu.growth(before, after);
        assertThat(g.keySet()).containsExactly("wanrep-exec-#", "wanrep-client", "other");
        assertThat(g.get("wanrep-exec-#")).isEqualTo(new ThreadCpu.Growth(40_000, 12));
        assertThat(g.get("wanrep-client")).isEqualTo(new ThreadCpu.Growth(30_000, 6));
        // a thread id the kernel gave to another thread meanwhile counts from zero too
        Map<String, ThreadCpu.Growth> reused = ThreadCpu.growth(Map.of(1L, new ThreadCpu.Sample("a", 90_000, 90)),
                Map.of(1L, new ThreadCpu.Sample("b", 10_000, 2)));
        assertThat(reused).containsExactly(Map.entry("b", new ThreadCpu.Growth(10_000, 2)));
    }

    @Test
    void seesThisProcessesThreadsWorking() throws Exception {
        long pid = ProcessHandle.current().pid();
        Thread t = new Thread(() -> {
            long end = System.nanoTime() + 300_000_000L, x = 0;
            while (System.nanoTime() < end) x += x * 31 + 1;
            if (x == 42) System.out.println(x);
        }, "busy-thread-7");
        Map<Long, ThreadCpu.Sample> before = ThreadCpu.sample(pid);
        t.start();
        Thread.sleep(200);
        Map<Long, ThreadCpu.Sample> after = ThreadCpu.sample(pid);
        t.join();
        assertThat(before).isNotEmpty();
        assertThat(ThreadCpu.growth(before, after).get("busy-thread-#").micros()).isGreaterThan(50_000);
    }
}
