package org.wanrep.sql;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class FunctionBodiesTest {
    @Test
    void anUnorderedLoopThatWritesIsFound() {
        String f = """
                CREATE OR REPLACE FUNCTION number_lines(p_cart int) RETURNS void LANGUAGE plpgsql AS $$
                DECLARE r record; n int := 0;
                BEGIN
                  FOR r IN SELECT * FROM cart_line WHERE cl_cart = p_cart LOOP
                    n := n + 1;
                    INSERT INTO order_line VALUES (p_cart, n, r.cl_item);
                  END LOOP;
                END $$""";
        assertThat(FunctionBodies.problems(f)).singleElement().asString().contains("FOR loop over a query without ORDER BY");
        assertThat(FunctionBodies.name(f)).isEqualTo("number_lines");
        assertThat(FunctionBodies.problems(f.replace("WHERE cl_cart = p_cart", "WHERE cl_cart = p_cart ORDER BY cl_item"))).isEmpty();
    }

    @Test
    void readOnlyBodiesAndOrderedQueriesPass() {
        assertThat(FunctionBodies.problems("CREATE FUNCTION f() RETURNS SETOF int LANGUAGE sql STABLE AS $$ SELECT id FROM t LIMIT 5 $$")).isEmpty();
        assertThat(FunctionBodies.problems("CREATE FUNCTION g() RETURNS void LANGUAGE plpgsql AS $$ BEGIN DELETE FROM t WHERE id IN (SELECT id FROM t ORDER BY id LIMIT 5); END $$")).isEmpty();
        assertThat(FunctionBodies.problems("CREATE FUNCTION g() RETURNS void LANGUAGE plpgsql AS $$ BEGIN DELETE FROM t WHERE id IN (SELECT id FROM t LIMIT 5); END $$"))
                .singleElement().asString().contains("LIMIT without ORDER BY");
        // words inside literals and comments are not code
        assertThat(FunctionBodies.problems("CREATE FUNCTION h() RETURNS void LANGUAGE plpgsql AS $$ BEGIN -- for r in select loop insert end loop\n"
                + " INSERT INTO log VALUES ('pg_backend_pid() LIMIT 1'); END $$")).isEmpty();
        assertThat(FunctionBodies.problems("SELECT 1")).isEmpty();
    }

    @Test
    void siteLocalReadsInWritingBodiesAreFound() {
        assertThat(FunctionBodies.problems("CREATE FUNCTION s() RETURNS void LANGUAGE plpgsql AS $$ BEGIN INSERT INTO log VALUES (current_setting('port')); END $$"))
                .singleElement().asString().contains("current_setting('port')");
        assertThat(FunctionBodies.problems("CREATE FUNCTION s() RETURNS void LANGUAGE sql AS $$ UPDATE t SET v = 1 WHERE xmin::text = '5' $$"))
                .singleElement().asString().contains("xmin");
        assertThat(FunctionBodies.problems("CREATE FUNCTION s() RETURNS void LANGUAGE sql AS $$ INSERT INTO log VALUES (pg_read_file('/etc/hostname')) $$"))
                .singleElement().asString().contains("pg_read_file");
        // a custom setting the session set travels with the transaction; a body that writes nothing reads what it likes
        assertThat(FunctionBodies.problems("CREATE FUNCTION s() RETURNS void LANGUAGE plpgsql AS $$ BEGIN INSERT INTO log VALUES (current_setting('app.tenant')); END $$")).isEmpty();
        assertThat(FunctionBodies.problems("CREATE FUNCTION s() RETURNS text LANGUAGE sql STABLE AS $$ SELECT current_setting('port') $$")).isEmpty();
    }

    @Test
    void perServerValuesAndOtherLanguagesAreFound() {
        assertThat(FunctionBodies.problems("CREATE FUNCTION p() RETURNS int LANGUAGE sql AS $$ SELECT pg_backend_pid() $$"))
                .singleElement().asString().contains("pg_backend_pid");
        assertThat(FunctionBodies.problems("CREATE FUNCTION p() RETURNS int LANGUAGE plpython3u AS $$ return 1 $$"))
                .singleElement().asString().contains("plpython3u");
        assertThat(FunctionBodies.problems("DO $$ BEGIN FOR r IN SELECT * FROM t LOOP UPDATE u SET x = r.x; END LOOP; END $$")).hasSize(1);
    }

    @Test
    void clocksAndUuidsInBodiesReadTheReplicatedValues() {
        String f = "CREATE FUNCTION add_cart(p int) RETURNS void LANGUAGE plpgsql AS $fn$ BEGIN "
                + "INSERT INTO cart VALUES (p, now(), clock_timestamp(), pg_catalog.now(), CURRENT_TIMESTAMP, gen_random_uuid(), 'now()'); END $fn$";
        String r = TimeRewriting.rewrite(f);
        assertThat(r).doesNotContain("clock_timestamp()").doesNotContain("gen_random_uuid()").doesNotContain("CURRENT_TIMESTAMP")
                .contains("'now()'")   // a string in the body stays a string
                .contains("current_setting('wanrep.ts', true)").contains("pg_catalog.random()").startsWith("CREATE FUNCTION add_cart(p int)");
        assertThat(r.split("wanrep.ts", -1)).hasSize(5);   // now(), clock_timestamp(), pg_catalog.now(), CURRENT_TIMESTAMP
        // a body in another language, and a dollar-quoted string outside a definition, stay as they are
        String c = "CREATE FUNCTION c() RETURNS int LANGUAGE plperl AS $$ now() $$";
        assertThat(TimeRewriting.rewrite(c)).isEqualTo(c);
        assertThat(TimeRewriting.rewrite("SELECT $$now()$$")).isEqualTo("SELECT $$now()$$");
        // a schema's own now() is not ours to replace
        assertThat(TimeRewriting.rewrite("SELECT app.now()")).isEqualTo("SELECT app.now()");
    }
}
