package org.wanrep.txn;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.wanrep.gcs.MsgId;

import java.lang.ref.WeakReference;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The log of ordered requests: what it serves, what it holds, on disk and not in memory, across restarts. */
class OrderedLogTest {
    private static final Duration NOW = Duration.ZERO;

    /** A request's payload: {@code size} bytes that depend on the GSN, so that a wrong entry cannot pass for it. */
    private static byte[] payload(long gsn, int size) {
        byte[] p = new byte[size];
        for (int i = 0; i < size; i++) p[i] = (byte) (gsn * 31 + i);
        return p;
    }

    private static void order(OrderedLog log, long gsn, int size) {
        log.ordered(gsn, new MsgId("a/1", gsn), payload(gsn, size));
    }

    /** GSNs of a range, views as "vG". */
    private static List<String> gsns(List<OrderedLog.Entry> es) {
        return es.stream().map(e -> (e.isView() ? "v" : "") + e.gsn()).toList();
    }

    @Test
    void aRequestIsNotHeldInMemoryOnceLogged() throws Exception {
        try (OrderedLog log = OrderedLog.temporary(100_000, 1L << 30)) {
            byte[] big = payload(1, 4 << 20);
            WeakReference<byte[]> ref = new WeakReference<>(big);
            log.ordered(1, new MsgId("a/1", 1), big);
            big = null;
            for (int i = 0; i < 50 && ref.get() != null; i++) {
                System.gc();
                Thread.sleep(20);
            }
            assertThat(ref.get() == null).as("the log must not keep a request's payload on the heap").isTrue();
            // and still serves it, from its file
            List<OrderedLog.Entry> es = log.range(1, 1, 10, NOW);
            assertThat(es).singleElement().satisfies(e -> assertThat(Arrays.equals(e.payload(), payload(1, 4 << 20))).isTrue());
        }
    }

    @Test
    void servesRequestsWithTheViewsBetweenThem() throws Exception {
        try (OrderedLog log = OrderedLog.temporary(100, 1L << 20)) {
            log.view(0, List.of("a/1", "b/1"));
            for (long g = 1; g <= 3; g++) order(log, g, 10 + (int) g);
            log.view(3, List.of("a/1", "b/1", "c/1"));
            for (long g = 4; g <= 6; g++) order(log, g, 10 + (int) g);
            assertThat(gsns(log.range(1, 6, 100, NOW))).containsExactly("v0", "1", "2", "3", "v3", "4", "5", "6");
            assertThat(gsns(log.range(2, 5, 100, NOW))).containsExactly("2", "3", "v3", "4", "5");
            assertThat(gsns(log.range(4, 6, 100, NOW))).containsExactly("v3", "4", "5", "6");
            assertThat(gsns(log.range(2, 6, 2, NOW))).containsExactly("2", "3");
            assertThat(log.range(4, 6, 100, NOW).get(0).members()).containsExactly("a/1", "b/1", "c/1");
            for (OrderedLog.Entry e : log.range(1, 6, 100, NOW)) {
                if (e.isView()) continue;
                assertThat(e.sender()).isEqualTo("a/1");
                assertThat(e.seq()).isEqualTo(e.gsn());
                assertThat(e.payload()).isEqualTo(payload(e.gsn(), 10 + (int) e.gsn()));
            }
            assertThat(log.range(5, 7, 10, NOW)).as("not delivered up to 7").isNull();
            order(log, 6, 16);   // replayed while catching up: already there
            assertThat(log.last()).isEqualTo(6);
        }
    }

    @Test
    void holdsAtMostItsWindowAndItsBytes() throws Exception {
        try (OrderedLog log = OrderedLog.temporary(3, 1L << 20)) {
            for (long g = 1; g <= 5; g++) order(log, g, 100);
            assertThat(log.first()).isEqualTo(3);
            assertThat(log.last()).isEqualTo(5);
            assertThat(log.range(2, 5, 10, NOW)).as("GSN 2 is outside the window").isNull();
            assertThat(gsns(log.range(3, 5, 10, NOW))).containsExactly("3", "4", "5");
        }
        try (OrderedLog log = OrderedLog.temporary(100, 3_500)) {   // ~1,030 bytes a request: three fit
            for (long g = 1; g <= 10; g++) order(log, g, 1_000);
            assertThat(log.first()).isEqualTo(8);
            assertThat(gsns(log.range(8, 10, 10, NOW))).containsExactly("8", "9", "10");
            order(log, 11, 10_000);   // larger than all it may hold: it holds nothing
            assertThat(log.first()).isZero();
            order(log, 12, 10);
            assertThat(log.first()).isEqualTo(12);
        }
    }

    @Test
    void aGapStartsItAfreshAndClearForgetsAll() throws Exception {
        try (OrderedLog log = OrderedLog.temporary(100, 1L << 20)) {
            order(log, 1, 10);
            order(log, 2, 10);
            order(log, 5, 10);
            assertThat(log.first()).isEqualTo(5);
            assertThat(log.range(2, 5, 10, NOW)).isNull();
            log.clear();
            assertThat(log.last()).isZero();
            order(log, 1, 10);
            assertThat(gsns(log.range(1, 1, 10, NOW))).containsExactly("1");
        }
    }

    @Test
    void theFileKeepsOnlyWhatIsHeldAndLoadsAtRestart(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("a.orderlog");
        try (OrderedLog log = OrderedLog.open(file, 10, 1L << 20, 1)) {
            for (long g = 1; g <= 50; g++) {
                if (g % 7 == 0) log.view(g - 1, List.of("a/1", "b/" + g));
                order(log, g, 200);
            }
            assertThat(log.first()).isEqualTo(41);
            // rewritten whenever what it no longer holds is as much as what it holds: at most twice the window
            assertThat(Files.size(file)).isLessThan(2 * 11 * 250);
            assertThat(gsns(log.range(41, 50, 100, NOW))).containsExactly("41", "v41", "42", "43", "44", "45", "46", "47", "48", "v48", "49", "50");
        }
        try (OrderedLog log = OrderedLog.open(file, 10, 1L << 20, 1)) {
            assertThat(log.first()).isEqualTo(41);
            assertThat(log.last()).isEqualTo(50);
            List<OrderedLog.Entry> es = log.range(41, 50, 100, NOW);
            assertThat(gsns(es)).containsExactly("41", "v41", "42", "43", "44", "45", "46", "47", "48", "v48", "49", "50");
            assertThat(es.get(9).members()).containsExactly("a/1", "b/49");
            assertThat(es.get(11).payload()).isEqualTo(payload(50, 200));
        }
    }

    @Test
    void aTornTailIsCutSoThatLaterRequestsLoadToo(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("a.orderlog");
        try (OrderedLog log = OrderedLog.open(file, 100, 1L << 20)) {
            for (long g = 1; g <= 5; g++) order(log, g, 50);
        }
        Files.write(file, new byte[] {'o', 0, 0, 0}, StandardOpenOption.APPEND);   // a crash in the middle of a write
        try (OrderedLog log = OrderedLog.open(file, 100, 1L << 20)) {
            assertThat(log.last()).isEqualTo(5);
            order(log, 6, 50);
        }
        try (OrderedLog log = OrderedLog.open(file, 100, 1L << 20)) {
            assertThat(log.last()).isEqualTo(6);
            assertThat(log.range(6, 6, 1, NOW).get(0).payload()).isEqualTo(payload(6, 50));
        }
    }

    @Test
    void aLoadedFileWithAGapStartsAfterIt(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("a.orderlog");
        try (OrderedLog log = OrderedLog.open(file, 100, 1L << 20)) {
            order(log, 1, 10);
            order(log, 2, 10);
            order(log, 7, 10);
            order(log, 8, 10);
        }
        try (OrderedLog log = OrderedLog.open(file, 100, 1L << 20)) {
            assertThat(log.first()).isEqualTo(7);
            assertThat(gsns(log.range(7, 8, 10, NOW))).containsExactly("7", "8");
        }
    }

    @Test
    void aTemporaryLogLeavesNoFile() {
        OrderedLog log = OrderedLog.temporary(10, 1L << 20);
        order(log, 1, 10);
        assertThat(log.file()).exists();
        log.close();
        assertThat(log.file()).doesNotExist();
    }
}
