package org.wanrep.emulator.dbt1;

import org.junit.jupiter.api.Test;
import org.wanrep.pg.LocalPostgres;
import org.wanrep.pg.TableDigest;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Symmetric execution in miniature: two fresh servers loaded alike, then the same sequence of
 * ordering-mix transactions (the most write-heavy) applied to each in the same order with the same
 * time arguments, as every site does with the totally ordered updates. Every table must end
 * identical, and the sequence must have written.
 * <p>
 * Identical servers would hide a missing tie-breaker (both would scan rows in the same order), so
 * replica b differs where real sites may: its tables are stored in reverse key order, it plans
 * without index scans, and its session runs in another time zone.
 */
class Dbt1DeterminismTest {
    private static final long SEED = Long.getLong("dbt1.seed", System.nanoTime());
    private static final int CLIENTS = 4;
    private static final int TRANSACTIONS = 400;
    private static final Instant START = Instant.parse("2024-06-01T12:00:00Z");

    @Test
    void theSameSequenceLeavesIdenticalReplicas() throws Exception {
        System.out.println("Dbt1DeterminismTest seed " + SEED + " (rerun with -Ddbt1.seed=" + SEED + ")");
        Dbt1Workload w = new Dbt1Workload(new Dbt1Options(new Scale(1_000, 2), Mix.ORDERING, false));
        // several browsers interleaved, as clients at different sites would be
        List<Random> clients = new ArrayList<>();
        for (int k = 0; k < CLIENTS; k++) clients.add(new Random(SEED + k));
        List<Dbt1Transaction> sequence = new ArrayList<>();
        for (int k = 0; k < TRANSACTIONS; k++) sequence.add((Dbt1Transaction) w.next(clients.get(k % CLIENTS)));

        try (LocalPostgres a = LocalPostgres.startTemporary(); LocalPostgres b = LocalPostgres.startTemporary();
             Connection ca = a.connect(); Connection cb = b.connect()) {
            w.load(ca, System.out);
            w.load(cb, System.out);
            Map<String, TableDigest.Digest> loadedA = TableDigest.of(ca);
            assertThat(TableDigest.compare(List.of("a", "b"), List.of(loadedA, TableDigest.of(cb))))
                    .as("the generator is deterministic").allSatisfy((t, v) -> assertThat(v).as(t).isEqualTo("same"));
            divergeLayoutAndPlans(cb);

            int written = 0;
            for (int k = 0; k < sequence.size(); k++) {
                Dbt1Transaction t = sequence.get(k);
                // the origin's time, fixed by the middleware in real runs: the same at both replicas
                String time = "timestamptz '" + START.plusMillis(1_500L * k) + "'";
                int rowsA = t.run(ca, time), rowsB = t.run(cb, time);
                assertThat(rowsB).as("rows of %s", t).isEqualTo(rowsA);
                if (!t.readOnly()) written++;
            }

            try (Statement st = cb.createStatement()) {
                st.execute("RESET ALL");   // digests print timestamps in the session's time zone
            }
            Map<String, TableDigest.Digest> da = TableDigest.of(ca), db = TableDigest.of(cb);
            Map<String, String> verdict = TableDigest.compare(List.of("a", "b"), List.of(da, db));
            System.out.println(written + " of " + TRANSACTIONS + " transactions wrote; digests " + verdict);
            assertThat(verdict).allSatisfy((t, v) -> assertThat(v).as(t).isEqualTo("same"));
            assertThat(verdict.keySet().stream().filter(t -> !t.startsWith("sequence ") && !t.startsWith("function "))).hasSize(10);   // the tables

            // not vacuous: the sequence ordered, filled carts and registered customers
            assertThat(da.get("public.orders").rows()).isGreaterThan(loadedA.get("public.orders").rows() + 10);
            assertThat(da.get("public.order_line").rows()).isGreaterThan(loadedA.get("public.order_line").rows() + 10);
            assertThat(da.get("public.cc_xacts").rows()).isGreaterThan(loadedA.get("public.cc_xacts").rows() + 10);
            assertThat(da.get("public.shopping_cart").rows()).isPositive();
            assertThat(da.get("public.shopping_cart_line").rows()).isPositive();
            assertThat(da.get("public.customer").rows()).isGreaterThan(loadedA.get("public.customer").rows());
            assertThat(da.get("public.item").md5()).isNotEqualTo(loadedA.get("public.item").md5());
            assertThat(count(ca, "SELECT count(*) FROM orders WHERE o_date >= timestamptz '" + START + "'")).isGreaterThan(10);
        }
    }

    /** Rewrites every loaded table in reverse key order, then turns index scans off and moves the session's time zone. */
    private static void divergeLayoutAndPlans(Connection c) throws SQLException {
        Map<String, String> keys = Map.of("country", "co_id", "author", "a_id", "item", "i_id", "customer", "c_id",
                "address", "addr_id", "orders", "o_id", "order_line", "ol_o_id, ol_id", "cc_xacts", "cx_o_id");
        try (Statement st = c.createStatement()) {
            for (Map.Entry<String, String> e : keys.entrySet()) {
                String t = e.getKey(), desc = e.getValue().replace(",", " DESC,") + " DESC";
                st.execute("CREATE TEMP TABLE reversed AS SELECT * FROM " + t + " ORDER BY " + desc);
                st.execute("TRUNCATE " + t);
                st.execute("INSERT INTO " + t + " SELECT * FROM reversed");
                st.execute("DROP TABLE reversed");
            }
            st.execute("ANALYZE");
            st.execute("SET enable_indexscan = off");
            st.execute("SET enable_indexonlyscan = off");
            st.execute("SET enable_bitmapscan = off");
            st.execute("SET TimeZone = 'Pacific/Chatham'");   // +12:45, with daylight saving time
        }
    }

    private static long count(Connection c, String sql) throws SQLException {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
