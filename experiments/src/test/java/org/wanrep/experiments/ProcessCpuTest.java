package org.wanrep.experiments;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

class ProcessCpuTest {
    /** A child that burned CPU and exited still counts in its parent's tree (as a PostgreSQL backend that ended does). */
    @Test
    void aTreeCountsItsExitedChildren() throws Exception {
        // the shell runs a busy subshell, waits for it (so its time moves to the shell's cutime), then idles
        Process root = new ProcessBuilder("bash", "-c", "( i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done ); echo done; sleep 30").start();
        try {
            assertThat(new String(root.getInputStream().readNBytes(5))).isEqualTo("done\n");
            long afterChild = ProcessCpu.treeMicros(List.of(root.pid()));
            assertThat(afterChild).as("the exited subshell's CPU time").isGreaterThan(50_000);
            assertThat(ProcessCpu.ownMicros(root.pid())).as("the shell itself did little").isLessThan(afterChild);
        } finally {
            root.descendants().forEach(ProcessHandle::destroyForcibly);
            root.destroyForcibly();
            root.waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void aProcessThatIsGoneCountsNothing() {
        assertThat(ProcessCpu.treeMicros(List.of(Long.MAX_VALUE))).isZero();
        assertThat(ProcessCpu.ownMicros(Long.MAX_VALUE)).isZero();
    }
}
