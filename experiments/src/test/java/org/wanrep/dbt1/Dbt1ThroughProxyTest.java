package org.wanrep.dbt1;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.wanrep.cli.ClusterCommand;
import org.wanrep.emulator.Arrivals;
import org.wanrep.emulator.DataLoad;
import org.wanrep.emulator.EmulatorConfig;
import org.wanrep.emulator.EmulatorGroup;
import org.wanrep.emulator.Load;
import org.wanrep.emulator.SiteTarget;
import org.wanrep.emulator.dbt1.Dbt1Options;
import org.wanrep.emulator.dbt1.Dbt1Workload;
import org.wanrep.emulator.dbt1.Interaction;
import org.wanrep.emulator.dbt1.Mix;
import org.wanrep.emulator.dbt1.Scale;
import org.wanrep.emulator.report.PhaseRow;
import org.wanrep.emulator.report.RunResult;
import org.wanrep.emulator.report.SiteResult;
import org.wanrep.emulator.report.SummaryTable;
import org.wanrep.emulator.report.TypeResult;
import org.wanrep.gcs.wan.LatencyMatrix;
import org.wanrep.site.InProcessCluster;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * DBT-1 under real replication: three sites on the first three na4 links, each a PostgreSQL replica
 * behind a proxy whose configuration holds the functions' table sets (as {@code cluster up --workload
 * dbt1} writes them), the smallest database loaded through the first site, then the ordering mix
 * (the most writes) from an emulator at every site at once, open loop. Every transaction must commit
 * (serialization failures retried), the run must have written orders, and every replica must end
 * identical: an under-declared table set (two sites serialize a call differently) or a function body
 * that is not a function of its arguments and the database fails here. Run symmetric under safe
 * delivery, and with write sets (primary-copy) under opt-safe, where each call runs at one site and
 * the others apply its rows. Rerun one seed with {@code -Ddbt1.seed=N}.
 */
class Dbt1ThroughProxyTest {
    private static final long SEED = Long.getLong("dbt1.seed", System.nanoTime());
    private static final int PER_SITE = 100;
    private static final double RATE_TPS = 30;

    @ParameterizedTest(name = "{0}, {1}")
    @CsvSource({"symmetric, safe", "primary-copy, opt-safe"})
    void orderingMixFromEverySiteLeavesIdenticalReplicasThatTookOrders(String execution, String delivery) throws Exception {
        System.out.println("Dbt1ThroughProxyTest " + execution + "/" + delivery + " seed " + SEED + " (rerun with -Ddbt1.seed=" + SEED + ")");
        Dbt1Workload w = new Dbt1Workload(new Dbt1Options(new Scale(1_000, 1), Mix.ORDERING, false));
        List<String> sites = LatencyMatrix.load("na4").first(3).sites();
        // what 'wanrep cluster up --workload dbt1 --set execution=E --set delivery=D' starts its sites with
        Map<String, String> settings = ClusterCommand.configuration(null, List.of("dbt1"), List.of("execution=" + execution, "delivery=" + delivery)).explicit();
        assertThat(settings).containsAllEntriesOf(w.middlewareSettings());
        try (InProcessCluster c = new InProcessCluster(sites, "na4", settings, System.out)) {
            List<SiteTarget> targets = new ArrayList<>();
            for (int i = 0; i < sites.size(); i++) targets.add(SiteTarget.of(sites.get(i), "127.0.0.1", c.site(i).proxyPort(), "postgres"));
            EmulatorConfig cfg = EmulatorConfig.builder(w, new Load.Open(RATE_TPS, Arrivals.FIXED)).transactions(PER_SITE).warmupFraction(0)
                    .connections(8).seed(SEED).drainTimeout(Duration.ofMinutes(2)).build();
            DataLoad.throughFirstSite(w, targets, cfg.connectionProperties(), System.out);
            Map<String, Long> before = counts(c);

            RunResult r = new EmulatorGroup(targets, cfg, System.out, Duration.ofSeconds(5)).run();
            System.out.print(SummaryTable.of(r));

            for (SiteResult s : r.sites()) {
                String errors = s.types().stream().filter(t -> t.aborts() > 0).map(t -> t.type() + ": " + t.lastError()).collect(Collectors.joining("; "));
                assertThat(s.unfinished()).as(s.site() + " unanswered").isZero();
                assertThat(s.all().aborts()).as(s.site() + " aborts: " + errors).isZero();
                assertThat(s.all().committed()).isEqualTo(PER_SITE);
            }

            Map<String, String> verdict = c.check();
            System.out.println("replica check: " + verdict);
            assertThat(verdict.keySet().stream().filter(t -> !t.startsWith("sequence ") && !t.startsWith("function "))).hasSize(10);   // the tables
            assertThat(verdict).as("tables that differ between replicas").allSatisfy((table, v) -> assertThat(v).as(table).isEqualTo("same"));

            // only the writing functions were replicated, so the proxies applied the table sets (without them every call
            // is an update of every table); the phase window opens as the first transaction is due, so allow for a few at its edge
            Set<String> writers = Arrays.stream(Interaction.values()).filter(i -> !i.readOnly()).map(Interaction::type).collect(Collectors.toSet());
            for (SiteResult s : r.sites()) {
                long written = s.types().stream().filter(t -> writers.contains(t.type())).mapToLong(TypeResult::committed).sum();
                long replicated = s.phases().stream().filter(p -> p.phase().equals("total")).mapToLong(PhaseRow::count).sum();
                assertThat(written).as(s.site() + " writing interactions").isPositive();
                assertThat(replicated).as(s.site() + " updates the proxy replicated, against " + written + " writing calls").isBetween(written - 3, written);
            }

            Map<String, Long> after = counts(c);
            System.out.println("rows before " + before + ", after " + after);
            assertThat(after.get("orders")).as("orders").isGreaterThan(before.get("orders"));
            assertThat(after.get("order_line")).as("order lines").isGreaterThan(before.get("order_line"));
            assertThat(after.get("cc_xacts")).as("card transactions").isGreaterThan(before.get("cc_xacts"));
            assertThat(after.get("shopping_cart")).as("carts").isGreaterThan(before.get("shopping_cart"));
        }
    }

    private static Map<String, Long> counts(InProcessCluster c) throws SQLException {
        Map<String, Long> m = new LinkedHashMap<>();
        try (Connection conn = c.postgres(0).connect(); Statement st = conn.createStatement()) {
            for (String t : List.of("orders", "order_line", "cc_xacts", "shopping_cart", "customer", "address")) {
                try (ResultSet rs = st.executeQuery("SELECT count(*) FROM " + t)) {
                    rs.next();
                    m.put(t, rs.getLong(1));
                }
            }
        }
        return m;
    }
}
