package org.wanrep.cli;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.wanrep.cluster.ClusterLayout;
import org.wanrep.emulator.report.ResultFiles;
import org.wanrep.site.InProcessCluster;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code wanrep emulate --cluster DIR} against two real sites (PostgreSQL + proxy each) on the first two na4 links. */
class EmulateCommandTest {
    @Test void emulatesEverySiteOfAClusterThroughItsProxyWithThePhaseBreakdown(@TempDir Path dir) throws Exception {
        long seed = new Random().nextLong();
        System.out.println("EmulateCommandTest seed " + seed);
        try (InProcessCluster c = new InProcessCluster(List.of("montreal", "boston"), "na4", Map.of("delivery", "safe"), System.out)) {
            List<ClusterLayout.SiteEntry> entries = new ArrayList<>();
            for (int i = 0; i < 2; i++)
                entries.add(new ClusterLayout.SiteEntry(c.sites().get(i), "127.0.0.1", c.site(i).proxyPort(), "127.0.0.1", c.postgres(i).port(),
                        0, c.postgres(i).dataDir().toString(), -1, ""));
            new ClusterLayout(entries).write(dir);
            Path out = dir.resolve("run");

            PrintStream stdout = System.out;
            ByteArrayOutputStream captured = new ByteArrayOutputStream();
            StringWriter err = new StringWriter();
            int code;
            try {
                System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
                code = Main.commandLine().setErr(new PrintWriter(err)).execute("emulate", "--cluster", dir.toString(), "--load", "--tables", "2",
                        "--rows", "300", "--rate", "20", "--transactions", "60", "--seed", Long.toString(seed), "--progress-seconds", "1",
                        "--out", out.toString());
            } finally {
                System.setOut(stdout);
            }
            String printed = captured.toString(StandardCharsets.UTF_8);
            System.out.println(printed);
            assertThat(code).as(err.toString()).isZero();
            assertThat(printed).contains("seed " + seed).contains("where the updates' time went");

            JsonNode r = ResultFiles.JSON.readTree(out.resolve("results.json").toFile());
            assertThat(r.get("sites")).hasSize(2);
            for (JsonNode s : r.get("sites")) {
                assertThat(s.get("transactions").asLong()).isEqualTo(60);
                assertThat(s.get("discarded_warmup").asLong()).isEqualTo(6);
                assertThat(s.get("all").get("measured").asLong()).isEqualTo(48);
                assertThat(s.get("all").get("committed").asLong()).isEqualTo(48);
                assertThat(s.get("achieved_rate_tps").asDouble()).isBetween(8.0, 12.0);
                long updates = 0, total = -1;
                for (JsonNode t : s.get("types")) if (t.get("type").asText().equals("update")) updates = t.get("committed").asLong();
                for (JsonNode p : s.get("phases")) if (p.get("phase").asText().equals("total")) total = p.get("count").asLong();
                // the proxy saw the updates this emulator sent in the measured window (give or take the ones straddling its edges)
                assertThat(total).isBetween(Math.max(1, updates - 4), updates + 4);
            }
            assertThat(r.get("all_sites").get("all").get("measured").asLong()).isEqualTo(96);
            assertThat(Files.readAllLines(out.resolve("phases.csv")).size()).isGreaterThan(4);
            assertThat(out.resolve("response_times.png")).isNotEmptyFile();
            assertThat(c.check().values()).containsOnly("same");
        }
    }

    @Test void theCommandLineHasTheMovedAndTheNewCommands() {
        assertThat(Main.commandLine().getSubcommands().keySet())
                .contains("demo", "emulate", "emulator-bench", "middleware", "cluster", "proxy-bench", "wan-bench", "gcs-bench", "gcs-targets");
    }
}
