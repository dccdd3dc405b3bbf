package org.wanrep.emulator.dbt1;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.wanrep.emulator.workload.Transaction;
import org.wanrep.pg.LocalPostgres;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One PostgreSQL loaded at the default (smallest) scale: the row counts of the scale rules, every
 * interaction run many times, and each function's declared table set checked against the locks
 * PostgreSQL records while it runs.
 */
class Dbt1DatabaseTest {
    private static final long SEED = Long.getLong("dbt1.seed", System.nanoTime());
    private static final Scale SCALE = Dbt1Options.defaults().scale();
    private static final String[] TABLES = {"country", "author", "item", "customer", "address", "orders", "order_line",
            "cc_xacts", "shopping_cart", "shopping_cart_line"};

    private static LocalPostgres pg;
    private static Connection c;
    private static final Map<String, Long> loadedCounts = new TreeMap<>();
    private static final Map<Long, Long> linesPerOrder = new TreeMap<>();

    @BeforeAll
    static void load() throws Exception {
        System.out.println("Dbt1DatabaseTest seed " + SEED + " (rerun with -Ddbt1.seed=" + SEED + ")");
        pg = LocalPostgres.startTemporary();
        c = pg.connect();
        new Dbt1Workload().load(c, System.out);
        for (String t : TABLES) loadedCounts.put(t, count("SELECT count(*) FROM " + t));
        try (Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT n, count(*) FROM (SELECT count(*) AS n FROM order_line GROUP BY ol_o_id) x GROUP BY n")) {
            while (rs.next()) linesPerOrder.put(rs.getLong(1), rs.getLong(2));
        }
    }

    @AfterAll
    static void stop() throws Exception {
        if (c != null) c.close();
        if (pg != null) pg.close();
    }

    @Test
    void loadingGivesTheRowCountsOfTheScaleRules() {
        assertThat(loadedCounts).containsEntry("country", 92L)
                .containsEntry("item", 1_000L)
                .containsEntry("author", 250L)
                .containsEntry("customer", 2880L * 10)
                .containsEntry("address", 2 * 2880L * 10)
                .containsEntry("orders", Math.round(0.9 * 2880 * 10))
                .containsEntry("cc_xacts", Math.round(0.9 * 2880 * 10))
                .containsEntry("shopping_cart", 0L)
                .containsEntry("shopping_cart_line", 0L);
        // 1 to 5 lines per order, each length well represented
        assertThat(linesPerOrder.keySet()).containsExactly(1L, 2L, 3L, 4L, 5L);
        assertThat(linesPerOrder.values().stream().mapToLong(Long::longValue).sum()).isEqualTo(SCALE.orders());
        assertThat(linesPerOrder.values()).allSatisfy(n -> assertThat(n).isGreaterThan(SCALE.orders() / 10));
        assertThat(loadedCounts.get("order_line")).isEqualTo(linesPerOrder.entrySet().stream().mapToLong(e -> e.getKey() * e.getValue()).sum());
    }

    @Test
    void javaAndSqlDigSylAgree() throws SQLException {
        for (long n : new long[]{0, 7, 10, 123, 28_800, 9_876_543_210L})
            try (PreparedStatement ps = c.prepareStatement("SELECT digsyl(?)")) {
                ps.setLong(1, n);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    assertThat(rs.getString(1)).isEqualTo(DigSyl.of(n));
                }
            }
    }

    @Test
    void everyInteractionRunsManyTimes() throws SQLException {
        Random r = new Random(SEED);
        Map<Interaction, Integer> runs = new EnumMap<>(Interaction.class);
        Map<Interaction, Integer> withRows = new EnumMap<>(Interaction.class);
        // every interaction in turn, so each buy confirm finds a cart filled by the interactions before it
        EmulatedBrowser b = new EmulatedBrowser(SCALE, r);
        for (int round = 0; round < 20; round++)
            for (Interaction i : Interaction.values()) {
                Dbt1Transaction t = b.next(i, r);
                int rows = t.run(c, "now()");
                runs.merge(i, 1, Integer::sum);
                if (rows > 0) withRows.merge(i, 1, Integer::sum);
                // these always show something: a page of promotions, a cart, a customer, an item
                if (Set.of(Interaction.HOME, Interaction.SEARCH_REQUEST).contains(i)) assertThat(rows).as("%s", t).isEqualTo(5);
                if (Set.of(Interaction.SHOPPING_CART, Interaction.BUY_REQUEST, Interaction.CUSTOMER_REGISTRATION, Interaction.ORDER_INQUIRY,
                        Interaction.PRODUCT_DETAIL, Interaction.ADMIN_REQUEST, Interaction.ADMIN_CONFIRM, Interaction.NEW_PRODUCTS).contains(i))
                    assertThat(rows).as("%s", t).isPositive();
            }
        // and the three mixes as clients draw them, through the Transaction contract in autocommit
        for (Mix mix : Mix.values()) {
            Dbt1Workload w = new Dbt1Workload(new Dbt1Options(SCALE, mix, false));
            Random client = new Random(SEED + 1 + mix.ordinal());
            for (int k = 0; k < 300; k++) {
                Transaction t = w.next(client);
                t.execute(c);
                runs.merge(((Dbt1Transaction) t).interaction(), 1, Integer::sum);
            }
            assertThat(c.getAutoCommit()).isTrue();
        }
        System.out.println("runs per interaction " + runs + "\nruns with rows " + withRows);
        assertThat(runs).hasSize(Interaction.values().length).allSatisfy((i, n) -> assertThat(n).isGreaterThanOrEqualTo(20));
        // the order path really orders: most buy confirms in turn find a filled cart
        assertThat(withRows.getOrDefault(Interaction.BUY_CONFIRM, 0)).isGreaterThanOrEqualTo(15);
        assertThat(count("SELECT count(*) FROM orders")).isGreaterThan(loadedCounts.get("orders"));
    }

    /**
     * Soundness of the declarations the middleware locks by: every table a function touches while
     * it runs (pg_locks of this backend before COMMIT; an index stands for its table) is declared,
     * and every table it writes is declared as written.
     */
    @Test
    void declaredTableSetsCoverEveryTableTouched() throws SQLException {
        Random r = new Random(SEED + 100);
        EmulatedBrowser b = new EmulatedBrowser(SCALE, r);
        Map<Interaction, Set<String>> observedReads = new EnumMap<>(Interaction.class), observedWrites = new EnumMap<>(Interaction.class);
        c.setAutoCommit(false);
        try {
            for (int round = 0; round < 30; round++)
                for (Interaction i : Interaction.values()) {
                    Dbt1Transaction t = b.next(i, r);
                    t.run(c, "now()");
                    Map<String, Boolean> locked = lockedTables();
                    c.commit();
                    Set<String> declared = new TreeSet<>(i.reads());
                    declared.addAll(i.writes());
                    for (Map.Entry<String, Boolean> e : locked.entrySet()) {
                        assertThat(declared).as("%s touched %s: %s", i, e.getKey(), t).contains(e.getKey());
                        if (e.getValue()) assertThat(i.writes()).as("%s wrote %s: %s", i, e.getKey(), t).contains(e.getKey());
                        (e.getValue() ? observedWrites : observedReads).computeIfAbsent(i, k -> new TreeSet<>()).add(e.getKey());
                    }
                }
        } finally {
            c.rollback();
            c.setAutoCommit(true);
        }
        // declared but never seen is safe (it only costs concurrency); report it
        for (Interaction i : Interaction.values()) {
            Set<String> unseen = new TreeSet<>(i.writes());
            unseen.removeAll(observedWrites.getOrDefault(i, Set.of()));
            Set<String> unseenReads = new TreeSet<>(i.reads());
            unseenReads.removeAll(observedReads.getOrDefault(i, Set.of()));
            unseenReads.removeAll(observedWrites.getOrDefault(i, Set.of()));
            if (!unseen.isEmpty() || !unseenReads.isEmpty())
                System.out.println(i.function() + ": declared but not seen here: writes " + unseen + ", reads " + unseenReads);
        }
        // the writers were seen writing what FACTS.md says they write
        assertThat(observedWrites.get(Interaction.SHOPPING_CART)).containsExactlyInAnyOrder("shopping_cart", "shopping_cart_line");
        assertThat(observedWrites.get(Interaction.BUY_REQUEST)).contains("customer", "shopping_cart", "shopping_cart_line");
        assertThat(observedWrites.get(Interaction.BUY_CONFIRM)).contains("orders", "order_line", "cc_xacts", "item");
        assertThat(observedWrites.get(Interaction.ADMIN_CONFIRM)).containsExactly("item");
        assertThat(observedWrites).doesNotContainKey(Interaction.CUSTOMER_REGISTRATION);
        assertThat(observedReads).doesNotContainKey(Interaction.CUSTOMER_REGISTRATION);
    }

    /**
     * Tables of schema public this backend holds locks on: true when written (RowExclusiveLock, or
     * RowShareLock from FOR UPDATE/SHARE, or stronger), false when only read (AccessShareLock).
     */
    private static Map<String, Boolean> lockedTables() throws SQLException {
        String sql = """
                SELECT t.relname, l.mode
                FROM pg_locks l
                JOIN pg_class c ON c.oid = l.relation
                LEFT JOIN pg_index i ON i.indexrelid = c.oid
                JOIN pg_class t ON t.oid = coalesce(i.indrelid, c.oid)
                JOIN pg_namespace n ON n.oid = t.relnamespace
                WHERE l.pid = pg_backend_pid() AND l.locktype = 'relation' AND l.granted
                  AND n.nspname = 'public' AND t.relkind IN ('r', 'p')""";
        Map<String, Boolean> out = new HashMap<>();
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            while (rs.next()) out.merge(rs.getString(1), !rs.getString(2).equals("AccessShareLock"), Boolean::logicalOr);
        }
        return out;
    }

    private static long count(String sql) throws SQLException {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
