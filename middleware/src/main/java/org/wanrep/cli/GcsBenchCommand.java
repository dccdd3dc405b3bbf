package org.wanrep.cli;

import org.wanrep.gcs.Delivery;
import org.wanrep.gcs.bench.GcsBench;
import org.wanrep.gcs.wan.LatencyMatrix;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;

@Command(name = "gcs-bench", mixinStandardHelpOptions = true,
        description = {"Measures total-order delivery latency and throughput: one member per site in this JVM,",
                "real JGroups TCP on loopback, WAN delays emulated per link from the latency matrix.",
                "Prints a table, then one JSON object as the last line."})
public final class GcsBenchCommand implements Callable<Integer> {
    @Option(names = "--latency-matrix", defaultValue = "na4",
            description = "preset (${COMPLETION-CANDIDATES}) or CSV file; 'none' for no delay (default: ${DEFAULT-VALUE})",
            completionCandidates = Presets.class)
    String matrix;

    @Option(names = "--sites", description = "use the first N sites of the matrix (default: all)")
    Integer sites;

    @Option(names = "--mode", defaultValue = "agreed", description = "agreed, safe, opt-safe or reliable (default: ${DEFAULT-VALUE})")
    String mode;

    @Option(names = "--sender", description = "site that sends every message (default: every site in turn)")
    String sender;

    @Option(names = "--rate", defaultValue = "50", description = "messages per second in all (default: ${DEFAULT-VALUE})")
    double rate;

    @Option(names = "--messages", defaultValue = "1000", description = "measured messages (default: ${DEFAULT-VALUE})")
    int messages;

    @Option(names = "--size", defaultValue = "1024", description = "payload bytes (default: ${DEFAULT-VALUE})")
    int size;

    @Option(names = "--warmup", description = "warm-up messages, not measured (default: 10%% of --messages, at least 20)")
    Integer warmup;

    @Option(names = "--jitter-ms", defaultValue = "0", description = "uniform jitter added per message (default: ${DEFAULT-VALUE})")
    double jitter;

    @Option(names = "--json-out", description = "also write the JSON result to this file")
    Path jsonOut;

    @Option(names = "--encrypted", description = "members encrypt and authenticate their traffic with a fresh shared key, as sites with gcs.secret_file do")
    boolean encrypted;

    static final class Presets implements Iterable<String> {
        public java.util.Iterator<String> iterator() { return LatencyMatrix.PRESETS.iterator(); }
    }

    @Override public Integer call() throws Exception {
        LatencyMatrix m;
        if (matrix.equals("none")) {
            int n = sites == null ? 4 : sites;
            List<String> names = new java.util.ArrayList<>();
            for (int i = 0; i < n; i++) names.add("site" + (i + 1));
            m = LatencyMatrix.zero(names);
        } else {
            m = LatencyMatrix.load(matrix);
            if (sites != null) m = m.first(sites);
        }
        Delivery d = Delivery.parse(mode);
        if (d == Delivery.RELIABLE) throw new IllegalArgumentException("gcs-bench measures ordered delivery: use agreed, safe or opt-safe");
        int w = warmup != null ? warmup : Math.max(20, messages / 10);
        Duration timeout = Duration.ofSeconds(60 + (long) (messages / Math.max(rate, 1)) * 2);
        GcsBench.Params p = new GcsBench.Params(m, d, sender, rate, messages, size, w, jitter, timeout);
        GcsBench.Result r;
        if (encrypted) {
            Path dir = Files.createTempDirectory("wanrep-gcs-bench");
            Path key = org.wanrep.gcs.jgroups.GcsSecret.generate(dir.resolve("gcs.secret"));
            try {
                r = new GcsBench(p, System.out, key).run();
            } finally {
                Files.deleteIfExists(key);
                Files.deleteIfExists(dir);
            }
        } else {
            r = new GcsBench(p, System.out).run();
        }
        System.out.println();
        System.out.print(GcsBench.table(List.of(r)));
        String json = r.toJson();
        if (jsonOut != null) Files.writeString(jsonOut, json + System.lineSeparator());
        System.out.println(json);
        return 0;
    }
}
