package org.wanrep.sql;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.wanrep.lock.TableSet;
import org.wanrep.pg.LocalPostgres;

import java.sql.Connection;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** Table sets of PL/pgSQL and SQL functions derived from their bodies in a real PostgreSQL catalog. */
class FunctionSetsTest {
    static LocalPostgres pg;
    static Catalog cat;

    @BeforeAll
    static void schema() throws Exception {
        pg = LocalPostgres.startTemporary();
        try (Connection c = pg.connect(); Statement st = c.createStatement()) {
            st.execute("""
                    CREATE TABLE item(id int PRIMARY KEY, price numeric, stock int);
                    CREATE TABLE cart(id bigint PRIMARY KEY, item int REFERENCES item(id), qty int);
                    CREATE TABLE log(id bigserial PRIMARY KEY, note text);
                    CREATE TABLE audit(id int PRIMARY KEY);
                    CREATE TABLE other(id int PRIMARY KEY);
                    CREATE SEQUENCE scid;
                    CREATE VIEW cheap AS SELECT id FROM item WHERE price < 10;
                    CREATE FUNCTION noop() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RETURN NEW; END$$;
                    CREATE TRIGGER t BEFORE INSERT ON audit FOR EACH ROW EXECUTE FUNCTION noop();
                    -- reads only
                    CREATE FUNCTION price_of(int) RETURNS numeric LANGUAGE sql STABLE AS 'SELECT price FROM item WHERE id = $1';
                    CREATE FUNCTION listing(p int) RETURNS TABLE (id int, price numeric) LANGUAGE plpgsql STABLE AS $$
                    #variable_conflict use_column
                    DECLARE
                        v_n int;
                        v_at timestamp with time zone;
                    BEGIN
                        SELECT count(*) INTO STRICT v_n FROM cheap;
                        PERFORM 1 FROM item WHERE item.id = p;
                        IF EXISTS (SELECT 1 FROM cart WHERE cart.item = p) THEN
                            RAISE NOTICE 'in a cart: %', p;
                        END IF;
                        RETURN QUERY SELECT i.id, i.price FROM item i WHERE i.id > p ORDER BY i.id;
                    END $$;
                    -- writes: a cart line with an id from a sequence
                    CREATE FUNCTION add_to_cart(p_item int, p_qty int) RETURNS bigint LANGUAGE plpgsql AS $$
                    DECLARE v_id bigint;
                    BEGIN
                        v_id := nextval('scid');
                        INSERT INTO cart(id, item, qty) VALUES (v_id, p_item, p_qty) RETURNING id INTO v_id;
                        RETURN v_id;
                    END $$;
                    CREATE FUNCTION add_to_cart2(p_item int) RETURNS void LANGUAGE sql AS
                      'INSERT INTO cart VALUES (nextval(''public.scid''::regclass), $1, 1)';
                    CREATE FUNCTION restock() RETURNS void LANGUAGE plpgsql AS $$
                    DECLARE r record;
                    BEGIN
                        FOR r IN SELECT c.item, sum(c.qty) AS q FROM cart c GROUP BY c.item ORDER BY c.item LOOP
                            UPDATE item SET stock = stock - r.q WHERE id = r.item;
                            INSERT INTO log(note) VALUES ('restocked ' || r.item);
                        END LOOP;
                    END $$;
                    CREATE FUNCTION lock_item(p int) RETURNS int LANGUAGE plpgsql AS $$
                    DECLARE v int;
                    BEGIN SELECT stock INTO v FROM item WHERE id = p FOR UPDATE; RETURN v; END $$;
                    -- composition, with a cycle
                    CREATE FUNCTION outer_f(p int) RETURNS numeric LANGUAGE plpgsql AS $$
                    BEGIN PERFORM add_to_cart(p, 1); RETURN price_of(p); END $$;
                    CREATE FUNCTION ping(n int) RETURNS int LANGUAGE plpgsql AS $$
                    BEGIN IF n > 0 THEN PERFORM pong(n - 1); END IF; DELETE FROM other WHERE id = n; RETURN n; END $$;
                    CREATE FUNCTION pong(n int) RETURNS int LANGUAGE plpgsql AS $$
                    BEGIN IF n > 0 THEN RETURN ping(n - 1); END IF; RETURN (SELECT count(*) FROM log); END $$;
                    -- not followed: every table
                    CREATE FUNCTION dynamic(t text) RETURNS void LANGUAGE plpgsql AS $$
                    BEGIN EXECUTE format('DELETE FROM %I', t); END $$;
                    CREATE FUNCTION calls_missing() RETURNS void LANGUAGE plpgsql AS $$
                    BEGIN PERFORM no_such_function(1); END $$;
                    CREATE FUNCTION seq_by_name(s text) RETURNS bigint LANGUAGE plpgsql AS $$
                    BEGIN RETURN nextval(s); END $$;
                    CREATE FUNCTION into_trigger() RETURNS void LANGUAGE sql AS 'INSERT INTO audit VALUES (1)';
                    CREATE FUNCTION count_expr() RETURNS bigint LANGUAGE plpgsql AS $$
                    DECLARE n bigint; BEGIN n := count(*) FROM log; RETURN n; END $$;
                    CREATE FUNCTION cte_write() RETURNS void LANGUAGE sql AS
                      'WITH d AS (DELETE FROM log RETURNING id) SELECT count(*) FROM d';
                    CREATE FUNCTION escaped() RETURNS void LANGUAGE plpgsql AS $$
                    BEGIN RAISE NOTICE E'\\'x'; DELETE FROM other; RAISE NOTICE 'y'; END $$;
                    CREATE FUNCTION own_path() RETURNS bigint LANGUAGE sql SET search_path = pg_temp, public AS 'SELECT count(*) FROM log';
                    CREATE FUNCTION int_abs(int) RETURNS int LANGUAGE internal IMMUTABLE STRICT AS 'int4abs';
                    CREATE FUNCTION configured_f() RETURNS void LANGUAGE plpgsql AS $$ BEGIN EXECUTE 'DELETE FROM other'; END $$;
                    """);
        }
        // a SQL-standard body: pgjdbc would split it at its semicolons, so it goes as one simple query
        try (Connection c = java.sql.DriverManager.getConnection(pg.jdbcUrl("postgres") + "?preferQueryMode=simple", "postgres", "");
             Statement st = c.createStatement()) {
            st.execute("CREATE FUNCTION atomic_body(p int) RETURNS int LANGUAGE sql BEGIN ATOMIC DELETE FROM other WHERE id = p; SELECT 1; END");
        }
        try (Connection c = pg.connect()) {
            cat = Catalog.load(c);
        }
    }

    @AfterAll
    static void stop() throws Exception { pg.close(); }

    static final SqlClassifier K = new SqlClassifier(() -> cat, Map.of("configured_f", TableSet.of(Set.of(), Set.of("public.other"))));

    private static UnitAnalysis a(String sql) { return K.analyze(List.of(sql)); }

    @Test
    void readOnlyFunctionsRunLocally() {
        UnitAnalysis p = a("SELECT price_of(3)");
        assertThat(p.route()).isEqualTo(Route.LOCAL);
        assertThat(p.tables().all()).isFalse();
        assertThat(p.tables().reads()).containsExactly("public.item");
        UnitAnalysis l = a("SELECT * FROM listing(5) AS l(id int, price numeric)");
        assertThat(l.route()).isEqualTo(Route.LOCAL);
        assertThat(l.tables().all()).isFalse();
        assertThat(l.tables().reads()).containsExactlyInAnyOrder("public.item", "public.cart");   // cheap is a view of item
    }

    @Test
    void writesAndSequencesAdvancedInBodies() {
        UnitAnalysis c = a("SELECT add_to_cart(1, 2)");
        assertThat(c.route()).isEqualTo(Route.UPDATE);
        assertThat(c.tables().all()).isFalse();
        assertThat(c.tables().writes()).containsExactlyInAnyOrder("public.cart", "public.scid");
        assertThat(c.tables().reads()).containsExactly("public.item");   // the foreign key check
        UnitAnalysis c2 = a("SELECT add_to_cart2(1)");
        assertThat(c2.tables().writes()).containsExactlyInAnyOrder("public.cart", "public.scid");
        UnitAnalysis r = a("SELECT restock()");
        assertThat(r.tables().all()).isFalse();
        assertThat(r.tables().writes()).containsExactlyInAnyOrder("public.item", "public.log", "public.log_id_seq");
        assertThat(r.tables().reads()).containsExactly("public.cart");
        UnitAnalysis f = a("SELECT lock_item(1)");
        assertThat(f.route()).isEqualTo(Route.UPDATE);
        assertThat(f.tables().writes()).containsExactly("public.item");
    }

    @Test
    void callsComposeAndCyclesEnd() {
        UnitAnalysis o = a("SELECT outer_f(1)");
        assertThat(o.tables().all()).isFalse();
        assertThat(o.tables().writes()).containsExactlyInAnyOrder("public.cart", "public.scid");
        assertThat(o.tables().reads()).containsExactly("public.item");
        for (String call : List.of("SELECT ping(3)", "SELECT pong(3)")) {
            UnitAnalysis p = a(call);
            assertThat(p.tables().all()).as(call).isFalse();
            assertThat(p.tables().writes()).as(call).containsExactly("public.other");
            assertThat(p.tables().reads()).as(call).containsExactly("public.log");
        }
    }

    @Test
    void whatCannotBeFollowedLocksEveryTable() {
        for (String call : List.of("SELECT dynamic('log')", "SELECT calls_missing()", "SELECT seq_by_name('scid')", "SELECT into_trigger()",
                "SELECT count_expr()", "SELECT cte_write()", "SELECT atomic_body(1)", "SELECT int_abs(-1)", "SELECT own_path()", "SELECT escaped()")) {
            UnitAnalysis u = a(call);
            assertThat(u.tables().all()).as(call).isTrue();
            assertThat(u.route()).as(call).isEqualTo(Route.UPDATE);
        }
    }

    @Test
    void configurationOverridesTheDerivation() {
        UnitAnalysis u = a("SELECT configured_f()");
        assertThat(u.tables().all()).isFalse();
        assertThat(u.tables().writes()).containsExactly("public.other");
    }

    /** The DBT-1 functions of the client emulator: the derivation covers at least the sets declared by hand (Interaction.java). */
    @Test
    void dbt1FunctionsDeriveAtLeastTheirDeclaredSets() throws Exception {
        java.nio.file.Path dir = java.nio.file.Path.of("..", "client-emulator", "src", "main", "resources", "dbt1");
        Map<String, List<Set<String>>> declared = Map.ofEntries(   // function -> [reads, writes] as in Interaction.java
                Map.entry("home", List.of(Set.of("customer", "item"), Set.of())),
                Map.entry("new_products", List.of(Set.of("item", "author"), Set.of())),
                Map.entry("best_sellers", List.of(Set.of("orders", "order_line", "item", "author"), Set.of())),
                Map.entry("product_detail", List.of(Set.of("item", "author"), Set.of())),
                Map.entry("search_request", List.of(Set.of("item"), Set.of())),
                Map.entry("search_results", List.of(Set.of("item", "author"), Set.of())),
                Map.entry("shopping_cart", List.of(Set.of("item"), Set.of("shopping_cart", "shopping_cart_line"))),
                Map.entry("customer_registration", List.of(Set.of(), Set.of())),
                Map.entry("buy_request", List.of(Set.of("item", "country"), Set.of("customer", "address", "shopping_cart", "shopping_cart_line"))),
                Map.entry("buy_confirm", List.of(Set.of("shopping_cart", "shopping_cart_line", "customer", "country"),
                        Set.of("address", "orders", "order_line", "cc_xacts", "item"))),
                Map.entry("order_inquiry", List.of(Set.of("customer"), Set.of())),
                Map.entry("order_display", List.of(Set.of("customer", "orders", "order_line", "item", "cc_xacts", "address", "country"), Set.of())),
                Map.entry("admin_request", List.of(Set.of("item", "author"), Set.of())),
                Map.entry("admin_confirm", List.of(Set.of("orders", "order_line"), Set.of("item"))));
        try (LocalPostgres db = LocalPostgres.startTemporary(); Connection c = db.connect(); Statement st = c.createStatement()) {
            st.execute(java.nio.file.Files.readString(dir.resolve("schema.sql")));
            st.execute(java.nio.file.Files.readString(dir.resolve("load.sql")));
            st.execute(java.nio.file.Files.readString(dir.resolve("functions.sql")));
            Catalog dbt1 = Catalog.load(c);
            SqlClassifier k = new SqlClassifier(() -> dbt1, Map.of());
            for (String f : new java.util.TreeSet<>(declared.keySet())) {
                UnitAnalysis u = k.analyze(List.of("SELECT * FROM " + f + "() AS l(a int)"));
                System.out.println(f + ": " + (u.tables().all() ? "every table" : "reads " + new java.util.TreeSet<>(u.tables().reads())
                        + ", writes " + new java.util.TreeSet<>(u.tables().writes())));
            }
            for (var e : declared.entrySet()) {
                UnitAnalysis u = k.analyze(List.of("SELECT * FROM " + e.getKey() + "() AS l(a int)"));
                Set<String> reads = q(e.getValue().get(0)), writes = q(e.getValue().get(1));
                assertThat(u.tables().all()).as(e.getKey()).isFalse();
                assertThat(u.tables().writes()).as(e.getKey()).containsAll(writes);
                Set<String> touched = new java.util.HashSet<>(u.tables().reads());
                touched.addAll(u.tables().writes());
                assertThat(touched).as(e.getKey()).containsAll(reads);
                assertThat(u.route()).as(e.getKey()).isEqualTo(writes.isEmpty() ? Route.LOCAL : Route.UPDATE);
            }
        }
    }

    private static Set<String> q(Set<String> names) {
        Set<String> out = new java.util.HashSet<>();
        for (String n : names) out.add("public." + n);
        return out;
    }
}
