package org.wanrep.history;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.wanrep.checker.History;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A short history-check as users run it: three sites (real PostgreSQL and middleware processes), the list-append
 * workload from every site, SIGSTOP/SIGCONT faults, then the checker. Fails on any lost append, divergence or anomaly.
 */
class HistoryCheckTest {
    @Test void shortRunWithPausesIsSerializable(@TempDir Path dir) throws Exception {
        long seed = System.nanoTime() & 0xFFFFFFFFL;
        HistoryCheck.Summary s = run(dir, new HistoryCheck.Settings(3, "lan", "safe", "symmetric", "pause", 20, 2, seed, dir, 10, false, List.of()));
        assertClean(s, seed, dir);
        assertThat(s.serving()).as("seed %d", seed).hasSize(3);
        for (String f : List.of("history.jsonl", "anomalies.json", "report.md", "timeline.png"))
            assertThat(dir.resolve(f)).exists();
        assertThat(History.load(dir.resolve("history.jsonl")).transactions()).hasSizeGreaterThan((int) s.transactions());
        assertThat(Files.readString(dir.resolve("report.md"))).contains("PASSED").contains("pause");
    }

    /** Every kind of fault (partition inside the stack included), write sets under opt-safe: nothing lost, no anomaly. */
    @Test void shortRunWithEveryFaultUnderWriteSets(@TempDir Path dir) throws Exception {
        long seed = System.nanoTime() & 0xFFFFFFFFL;
        HistoryCheck.Summary s = run(dir, new HistoryCheck.Settings(3, "lan", "opt-safe", "primary-copy", "all", 30, 2, seed, dir, 10, false, List.of()));
        assertClean(s, seed, dir);
        assertThat(s.serving()).as("seed %d", seed).hasSizeGreaterThanOrEqualTo(2);
    }

    private static HistoryCheck.Summary run(Path dir, HistoryCheck.Settings settings) throws Exception {
        // run as root, PostgreSQL runs as user postgres and must reach its data directory under the 0700 temp dir
        Files.setPosixFilePermissions(dir, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        System.out.println("seed " + settings.seed());
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(log, true, StandardCharsets.UTF_8);
        HistoryCheck.Summary s;
        try {
            s = HistoryCheck.run(settings, out);
        } finally {
            System.out.println(log.toString(StandardCharsets.UTF_8));
        }
        System.out.println(HistoryCheck.json(s));
        return s;
    }

    private static void assertClean(HistoryCheck.Summary s, long seed, Path dir) throws java.io.IOException {
        if (!s.passed()) {
            // the temporary directory goes with the test: CI keeps only the output, so the evidence goes there
            for (String f : List.of("anomalies.json", "report.md")) {
                Path p = dir.resolve(f);
                if (Files.exists(p)) System.out.println("---- " + f + " (seed " + seed + ")\n" + Files.readString(p));
            }
            // and the events of every transaction the report names, with their sites and times
            Path report = dir.resolve("report.md"), history = dir.resolve("history.jsonl");
            if (Files.exists(report) && Files.exists(history)) {
                java.util.Set<String> named = new java.util.HashSet<>();
                java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\bT(\\d+)\\b").matcher(Files.readString(report));
                while (m.find()) named.add("\"txn\":" + m.group(1) + ",");
                System.out.println("---- events of the transactions named above");
                try (var lines = Files.lines(history)) {
                    lines.filter(l -> named.stream().anyMatch(l::contains)).limit(200).forEach(System.out::println);
                }
            }
        }
        assertThat(s.ok()).as("seed %d", seed).isPositive();
        assertThat(s.faults_injected()).as("seed %d", seed).isPositive();
        assertThat(s.lost()).as("seed %d", seed).isZero();
        assertThat(s.divergent()).as("seed %d", seed).isZero();
        assertThat(s.anomalies()).as("seed %d: %s", seed, s.anomaly_types()).isZero();
    }
}
