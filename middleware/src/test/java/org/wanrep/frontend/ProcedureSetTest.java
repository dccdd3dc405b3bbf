package org.wanrep.frontend;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.wanrep.sql.UnitClassifier;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A TPC-W-like procedure set written for the tests, loaded and called unchanged through the proxies
 * of three sites at once: carts stamped with now(), ids from nextval() inside bodies and from serial
 * columns, order lines numbered in a loop, and a record-set function called with a column-alias list.
 * Under each execution policy (each with another delivery): replicas identical, sequences and function
 * definitions included (the replica comparison covers both). Under symmetric execution the loop must
 * be ordered (the unordered one is refused when defined); write-set policies run calls at one site, so
 * the unordered one is accepted there.
 */
class ProcedureSetTest {
    private static final String SCHEMA = """
            CREATE SEQUENCE scid;
            CREATE TABLE cart (id int PRIMARY KEY, c_id int, created timestamptz);
            CREATE TABLE cart_line (cart int REFERENCES cart, item int, qty int, PRIMARY KEY (cart, item));
            CREATE TABLE orders (id serial PRIMARY KEY, cart int, placed timestamptz, token uuid);
            CREATE TABLE order_line (o int REFERENCES orders, line int, item int, qty int, PRIMARY KEY (o, line));
            CREATE FUNCTION create_cart(p_c int) RETURNS int LANGUAGE plpgsql AS $$
            DECLARE v int;
            BEGIN
              v := nextval('scid');
              INSERT INTO cart VALUES (v, p_c, now());
              RETURN v;
            END $$;
            CREATE FUNCTION add_line(p_cart int, p_item int, p_qty int) RETURNS void LANGUAGE sql AS $$
              INSERT INTO cart_line VALUES (p_cart, p_item, p_qty)
              ON CONFLICT (cart, item) DO UPDATE SET qty = cart_line.qty + excluded.qty
            $$;
            CREATE FUNCTION cart_view(p_cart int) RETURNS SETOF record LANGUAGE sql STABLE AS $$
              SELECT item, qty FROM cart_line WHERE cart = p_cart ORDER BY item
            $$;
            """;

    private static String placeOrder(boolean ordered) {
        return """
            CREATE FUNCTION place_order(p_cart int) RETURNS int LANGUAGE plpgsql AS $$
            DECLARE r record; n int := 0; v_o int;
            BEGIN
              INSERT INTO orders (cart, placed, token) VALUES (p_cart, clock_timestamp(), gen_random_uuid()) RETURNING id INTO v_o;
              FOR r IN SELECT item, qty FROM cart_line WHERE cart = p_cart %s LOOP
                n := n + 1;
                INSERT INTO order_line VALUES (v_o, n, r.item, r.qty);
              END LOOP;
              RETURN v_o;
            END $$""".formatted(ordered ? "ORDER BY item" : "");
    }

    @ParameterizedTest(name = "{0} execution, {1} delivery")
    @CsvSource({"symmetric, safe", "primary-copy, opt-safe", "local-copy, agreed"})
    void proceduresCalledFromEverySiteKeepReplicasIdentical(String execution, String delivery) throws Exception {
        boolean symmetric = execution.equals("symmetric");
        try (TestCluster c = new TestCluster(List.of("a", "b", "c"), "lan", Map.of("delivery", delivery, "execution", execution))) {
            try (Connection x = c.connect(0); Statement st = x.createStatement()) {
                for (String stmt : UnitClassifier.splitStatements(SCHEMA)) st.execute(stmt);
                if (symmetric) {
                    SQLException refused = null;
                    try {
                        st.execute(placeOrder(false));
                    } catch (SQLException e) {
                        refused = e;
                    }
                    assertThat((Object) refused).as("the unordered loop under symmetric execution").isNotNull();
                    assertThat(refused.getSQLState()).isEqualTo("0A000");
                    assertThat(refused.getMessage()).contains("place_order");
                }
                st.execute(placeOrder(symmetric));
            }
            c.awaitQuiescent();
            List<Thread> ts = new ArrayList<>();
            List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
            for (int s = 0; s < 3; s++) {
                int site = s;
                ts.add(Thread.ofPlatform().start(() -> {
                    try (Connection x = c.connect(site); Statement st = x.createStatement()) {
                        for (int i = 0; i < 6; i++) {
                            int cart;
                            try (ResultSet rs = st.executeQuery("SELECT create_cart(" + (site * 100 + i) + ")")) {
                                rs.next();
                                cart = rs.getInt(1);
                            }
                            st.execute("SELECT add_line(" + cart + ", " + (30 - i) + ", 1)");
                            st.execute("SELECT add_line(" + cart + ", " + (10 + i) + ", 2)");
                            st.execute("SELECT add_line(" + cart + ", " + (10 + i) + ", 1)");
                            try (ResultSet rs = st.executeQuery("SELECT * FROM cart_view(" + cart + ") AS l(item int, qty int)")) {
                                int lines = 0;
                                while (rs.next()) lines++;
                                if (lines != 2) throw new AssertionError("cart " + cart + " shows " + lines + " lines at its origin");
                            }
                            st.execute("SELECT place_order(" + cart + ")");
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                }));
            }
            for (Thread t : ts) t.join();
            assertThat(failures).isEmpty();
            Map<String, String> verdict = c.check();
            assertThat(verdict.keySet()).contains("sequence public.scid", "sequence public.orders_id_seq")
                    .anySatisfy(k -> assertThat(k).startsWith("function public.place_order"));
            assertThat(verdict).allSatisfy((k, v) -> assertThat(v).as(k).isEqualTo("same"));
            try (Connection x = c.pgs.get(1).connect(); Statement st = x.createStatement();
                 ResultSet rs = st.executeQuery("SELECT count(*), count(DISTINCT o) FROM order_line")) {
                rs.next();
                assertThat(rs.getInt(1)).isEqualTo(36);
                assertThat(rs.getInt(2)).isEqualTo(18);
            }
        }
    }
}
