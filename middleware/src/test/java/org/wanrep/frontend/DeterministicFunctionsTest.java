package org.wanrep.frontend;

import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Functions every site runs (symmetric execution) give the same result everywhere: now(),
 * CURRENT_TIMESTAMP, clock_timestamp(), gen_random_uuid() and random() inside PL/pgSQL and SQL
 * bodies, in a trigger and in a DO block, called at every site at once; and what cannot be made
 * deterministic (an unordered loop that numbers the rows it writes) is refused when defined, naming
 * the function and the construct. One call of a function that inserts now() made the replicas differ.
 */
class DeterministicFunctionsTest {
    @Test
    void functionBodiesGiveTheSameValuesAtEverySite() throws Exception {
        try (TestCluster c = new TestCluster(List.of("a", "b", "c"), "lan", Map.of("delivery", "safe"))) {
            try (Connection x = c.connect(0); Statement st = x.createStatement()) {
                st.execute("CREATE TABLE cart (id int PRIMARY KEY, site text, t1 timestamptz, t2 timestamptz, t3 timestamptz, u uuid, r float8, stamped timestamptz)");
                st.execute("""
                        CREATE FUNCTION stamp() RETURNS trigger LANGUAGE plpgsql AS $$
                        BEGIN NEW.stamped := now(); RETURN NEW; END $$""");
                st.execute("CREATE TRIGGER cart_stamp BEFORE INSERT ON cart FOR EACH ROW EXECUTE FUNCTION stamp()");
                st.execute("""
                        CREATE FUNCTION add_cart(p_id int, p_site text) RETURNS void LANGUAGE plpgsql AS $$
                        BEGIN
                          INSERT INTO cart (id, site, t1, t2, t3, u, r)
                          VALUES (p_id, p_site, now(), clock_timestamp(), CURRENT_TIMESTAMP, gen_random_uuid(), random());
                        END $$""");
                st.execute("""
                        CREATE FUNCTION add_cart_sql(p_id int, p_site text) RETURNS void LANGUAGE sql AS $$
                          INSERT INTO cart (id, site, t1, t2, u, r) VALUES (p_id, p_site, current_timestamp, statement_timestamp(), gen_random_uuid(), random())
                        $$""");
            }
            List<Thread> ts = new ArrayList<>();
            List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
            for (int s = 0; s < 3; s++) {
                int site = s;
                ts.add(Thread.ofPlatform().start(() -> {
                    try (Connection x = c.connect(site); Statement st = x.createStatement()) {
                        for (int i = 0; i < 15; i++) {
                            int id = site * 1000 + i;
                            if (i % 3 == 0) st.execute("SELECT add_cart(" + id + ", '" + c.sites.get(site) + "')");
                            else if (i % 3 == 1) st.execute("SELECT add_cart_sql(" + id + ", '" + c.sites.get(site) + "')");
                            else st.execute("DO $$ BEGIN INSERT INTO cart (id, site, t1, u, r) VALUES (" + id + ", 'do', now(), gen_random_uuid(), random()); END $$");
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                }));
            }
            for (Thread t : ts) t.join();
            assertThat(failures).isEmpty();
            assertThat(c.check().values()).as("replicas compared").containsOnly("same");
        }
    }

    @Test
    void whatCannotBeMadeDeterministicIsRefusedWhenDefined() throws Exception {
        try (TestCluster c = new TestCluster(List.of("a", "b", "c"), "lan", Map.of("delivery", "safe"))) {
            try (Connection x = c.connect(0); Statement st = x.createStatement()) {
                st.execute("CREATE TABLE cart_line (cart int, item int, PRIMARY KEY (cart, item))");
                st.execute("CREATE TABLE order_line (o int, line int, item int, PRIMARY KEY (o, line))");
                assertThatThrownBy(() -> st.execute("""
                        CREATE FUNCTION place_order(p_cart int) RETURNS void LANGUAGE plpgsql AS $$
                        DECLARE r record; n int := 0;
                        BEGIN
                          FOR r IN SELECT * FROM cart_line WHERE cart = p_cart LOOP
                            n := n + 1;
                            INSERT INTO order_line VALUES (p_cart, n, r.item);
                          END LOOP;
                        END $$"""))
                        .isInstanceOf(SQLException.class)
                        .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("0A000"))
                        .hasMessageContaining("place_order").hasMessageContaining("without ORDER BY");
                // with an order on a key it is deterministic, and accepted
                st.execute("""
                        CREATE FUNCTION place_order(p_cart int) RETURNS void LANGUAGE plpgsql AS $$
                        DECLARE r record; n int := 0;
                        BEGIN
                          FOR r IN SELECT * FROM cart_line WHERE cart = p_cart ORDER BY item LOOP
                            n := n + 1;
                            INSERT INTO order_line VALUES (p_cart, n, r.item);
                          END LOOP;
                        END $$""");
                st.execute("INSERT INTO cart_line VALUES (1, 30), (1, 10), (1, 20)");
                st.execute("SELECT place_order(1)");
            }
            assertThat(c.check().values()).containsOnly("same");
        }
    }

    /** A function created directly in a replica (never seen by the proxy) that reads the clock is refused when called. */
    @Test
    void aClockReadingFunctionCreatedOutsideWanrepIsRefusedWhenCalled() throws Exception {
        try (TestCluster c = new TestCluster(List.of("a", "b", "c"), "lan", Map.of("delivery", "safe"))) {
            try (Connection x = c.connect(0); Statement st = x.createStatement()) {
                st.execute("CREATE TABLE stamps (id int PRIMARY KEY, t timestamptz)");
            }
            c.awaitQuiescent();
            for (org.wanrep.pg.LocalPostgres pg : c.pgs) {   // as a dump restored into each replica would
                try (Connection x = pg.connect(); Statement st = x.createStatement()) {
                    st.execute("CREATE FUNCTION stamp_it(p int) RETURNS void LANGUAGE plpgsql AS $$ BEGIN INSERT INTO stamps VALUES (p, now()); END $$");
                }
            }
            try (Connection x = c.connect(1); Statement st = x.createStatement()) {
                st.execute("ALTER TABLE stamps ADD COLUMN note text");   // any DDL through the proxy: the catalog is read again
                assertThatThrownBy(() -> st.execute("SELECT stamp_it(1)"))
                        .isInstanceOf(SQLException.class)
                        .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("0A000"))
                        .hasMessageContaining("stamp_it").hasMessageContaining("clock");
            }
            assertThat(c.check().values()).containsOnly("same");
        }
    }
}
