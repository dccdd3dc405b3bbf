package org.wanrep.bench;

import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** peer-bench's reporting of wanrep's threads: the transactions in the sampled window, the table and the JSON. */
class PeerBenchReportTest {
    private static final String OUTPUT = String.join("\n",
            "progress: 1.0 s, 500.0 tps, lat 15.9 ms stddev 3.1, 0 failed",
            "progress: 2.0 s, 600.0 tps, lat 13.3 ms stddev 2.0, 0 failed",
            "progress: 3.0 s, 610.0 tps, lat 13.1 ms stddev 2.0, 0 failed",
            "progress: 4.0 s, 620.4 tps, lat 12.9 ms stddev 2.0, 0 failed",
            "progress: 5.0 s, 700.0 tps, lat 11.0 ms stddev 2.0, 0 failed",
            "tps = 605.5 (without initial connection time)");

    @Test
    void countsTheSecondsAfterTheFirstSampleUpToTheSecond() {
        // samples at 2 s and 4 s: the seconds ending at 3 and 4
        assertThat(PeerBench.transactionsBetween(OUTPUT, 2, 4)).isEqualTo(1230);
        assertThat(PeerBench.transactionsBetween("tps = 5", 2, 4)).isZero();
    }

    @Test
    void theTablesHaveAColumnPerSystemThatRan() {
        List<PeerBench.Run> runs = List.of(new PeerBench.Run("tpcb", "direct", 1000, 0, ""), new PeerBench.Run("tpcb", "wanrep", 90, 0, ""));
        assertThat(PeerBench.present(runs)).containsExactly("direct", "wanrep");
        String table = PeerBench.table(runs);
        assertThat(table.lines().findFirst().orElseThrow()).contains("direct").contains("wanrep").doesNotContain("pgpool");
        assertThat(table).containsPattern("tpcb\\s+1000\\s+1\\.00\\s+0\\s+0us\\s+90\\s+0\\.09");
        assertThat(PeerBench.cpuTable(runs).lines().findFirst().orElseThrow()).doesNotContain("pgbouncer");
    }

    @Test
    void theThreeServersCountEachReplicatedTransactionOnce() {
        List<PeerBench.Run> each = List.of(new PeerBench.Run("tpcb", PeerBench.CEILING, 3000, 1, "", 60_000),
                new PeerBench.Run("tpcb", PeerBench.CEILING, 2800, 2, "pgbench exit 2", 56_000),
                new PeerBench.Run("tpcb", PeerBench.CEILING, 3200, 0, "", 64_000));
        PeerBench.Run r = PeerBench.replicated(each);
        assertThat(r.tps()).isEqualTo(3000);
        assertThat(r.transactions()).isEqualTo(60_000);
        assertThat(r.failed()).isEqualTo(3);
        assertThat(r.note()).isEqualTo("pgbench exit 2");
        assertThat(r.system()).isEqualTo(PeerBench.CEILING);
        // its column comes last, after the systems with middleware
        List<PeerBench.Run> runs = List.of(new PeerBench.Run("tpcb", "direct", 10_000, 0, ""), new PeerBench.Run("tpcb", "wanrep", 900, 0, ""), r);
        assertThat(PeerBench.present(runs)).containsExactly("direct", "wanrep", PeerBench.CEILING);
    }

    @Test
    void replicatedSystemsAreSetAgainstTheCeiling() throws Exception {
        List<PeerBench.Run> runs = List.of(new PeerBench.Run("tpcb", "direct", 10_000, 0, ""), new PeerBench.Run("tpcb", "pgbouncer", 9_000, 0, ""),
                new PeerBench.Run("tpcb", "pgpool-II", 1_500, 0, ""), new PeerBench.Run("tpcb", "wanrep", 750, 0, ""),
                new PeerBench.Run("tpcb", PeerBench.CEILING, 3_000, 0, ""));
        assertThat(PeerBench.ceilingShare(runs, runs.get(2))).isEqualTo(0.5);
        assertThat(PeerBench.ceilingShare(runs, runs.get(3))).isEqualTo(0.25);
        assertThat(PeerBench.ceilingShare(runs, runs.get(1))).isNaN();   // one server: nothing replicated
        String table = PeerBench.ceilingTable(runs);
        assertThat(table.lines().findFirst().orElseThrow()).contains("pgpool-II").contains("wanrep").doesNotContain("pgbouncer");
        assertThat(table).containsPattern("tpcb\\s+0\\.50\\s+0\\.25");
        String json = PeerBench.json(runs, 8, 10, 20, Map.of());
        assertThat(json).contains("\"system\":\"wanrep\",\"tps\":750,\"ratio\":0.075,\"ceiling_share\":0.25");
        assertThat(json).doesNotContain("\"system\":\"pgbouncer\",\"tps\":9000,\"ratio\":0.9,\"ceiling_share\"");
        assertThat(PeerBench.csv(runs).lines().toList()).contains("\"tpcb\",wanrep,750.0,0.075,0.250,0,0,0.0,0,0,\"\"",
                "\"tpcb\",pgbouncer,9000.0,0.900,,0,0,0.0,0,0,\"\"");
        // without a ceiling run: no table, no share
        assertThat(PeerBench.ceilingTable(runs.subList(0, 4))).isEmpty();
        assertThat(PeerBench.ceilingShare(runs.subList(0, 4), runs.get(3))).isNaN();
    }

    @Test
    void reportsThreadGroupsPerTransaction() throws Exception {
        Map<String, double[]> groups = new LinkedHashMap<>();
        groups.put("wanrep-client", new double[]{338, 5.55});
        groups.put("wanrep-exec", new double[]{300, 6.9});
        groups.put("gcs-tick-a/#", new double[]{2, 0.04});
        Map<String, Map<String, double[]>> byWorkload = Map.of("tpcb", groups);
        String table = PeerBench.threadTable(byWorkload, 2);
        assertThat(table).contains("wanrep-client").contains("wanrep-exec").doesNotContain("gcs-tick-a")   // only the top 2 listed
                .containsPattern("= group communication\\s+2\\s+0\\.04")   // but counted in its layer
                .containsPattern("= all threads\\s+640\\s+12\\.49");
        assertThat(PeerBench.layer("Connection.Rece")).isEqualTo("group communication");
        assertThat(PeerBench.layer("C# CompilerThre")).isEqualTo("JVM (JIT, GC)");
        assertThat(PeerBench.layer("wanrep-exec")).isEqualTo("executors");
        String json = PeerBench.json(List.of(), 8, 10, 20, 10, Map.of(), Map.of(), byWorkload);
        assertThat(json).contains("\"wanrep_threads\":{\"tpcb\":{\"wanrep-client\":{").contains("\"wakes_per_txn\":5.55");
    }

    @Test
    void theJitCompilersShareOfACoreDecidesWhenWanrepIsWarm() throws Exception {
        Map<String, org.wanrep.experiments.ThreadCpu.Growth> growth = new LinkedHashMap<>();
        growth.put("C# CompilerThre", new org.wanrep.experiments.ThreadCpu.Growth(1_000_000, 40));   // C1 and C2 threads of one group
        growth.put("wanrep-client", new org.wanrep.experiments.ThreadCpu.Growth(9_000_000, 90_000));
        assertThat(PeerBench.compilerShare(growth, 5)).isEqualTo(0.2);
        growth.put("C# CompilerThre", new org.wanrep.experiments.ThreadCpu.Growth(200_000, 4));
        assertThat(PeerBench.compilerShare(growth, 5)).isLessThan(PeerBench.JIT_QUIET_SHARE);
        assertThat(PeerBench.compilerShare(Map.of(), 5)).isZero();
        String json = PeerBench.json(List.of(), 8, 10, 20, 10, Map.of(), Map.of(), Map.of(), Map.of("tpcb", 35));
        assertThat(json).contains("\"wanrep_jit_warmup_seconds\":{\"tpcb\":35}");
    }
}
