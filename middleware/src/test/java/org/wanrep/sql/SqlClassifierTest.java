package org.wanrep.sql;

import org.junit.jupiter.api.Test;
import org.wanrep.lock.TableSet;
import org.wanrep.pg.LocalPostgres;

import java.sql.Connection;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class SqlClassifierTest {
    static final Catalog CAT = Catalog.empty()
            .relation("public.accounts").relation("public.history").relation("public.orders").relation("public.items")
            .relation("public.audit").relation("app.accounts").relation("public.only_here")
            .view("public.rich", Set.of("public.accounts"))
            .foreignKey("public.items", "public.orders", true)      // ON DELETE CASCADE
            .foreignKey("public.history", "public.accounts", false)
            .trigger("public.audit")
            .defaultSequence("public.orders", "public.orders_id_seq")
            .builtins(Set.of("sum", "count", "abs", "lower", "now", "random", "coalesce", "nextval", "upper", "gen_random_uuid", "clock_timestamp"));

    static final SqlClassifier C = new SqlClassifier(() -> CAT, Map.of("public.transfer", TableSet.of(Set.of(), Set.of("public.accounts", "public.history"))));

    private static UnitAnalysis a(String sql) { return C.analyze(List.of(sql)); }

    @Test
    void readAndWriteSetsOfDml() {
        assertThat(a("SELECT sum(balance) FROM accounts").route()).isEqualTo(Route.LOCAL);
        assertThat(a("SELECT sum(balance) FROM accounts").tables().reads()).containsExactly("public.accounts");
        UnitAnalysis u = a("UPDATE accounts SET balance = balance + 1 WHERE id = 7");
        assertThat(u.route()).isEqualTo(Route.UPDATE);
        assertThat(u.tables().all()).isFalse();
        assertThat(u.tables().writes()).containsExactly("public.accounts");
        UnitAnalysis ins = a("INSERT INTO history SELECT id, balance FROM accounts WHERE balance > 10");
        assertThat(ins.tables().writes()).containsExactly("public.history");
        assertThat(ins.tables().reads()).contains("public.accounts");
        assertThat(a("UPDATE app.accounts SET balance = 0").tables().writes()).containsExactly("app.accounts");
        assertThat(a("DELETE FROM history USING accounts WHERE history.id = accounts.id").tables().writes()).contains("public.history");
        assertThat(a("SELECT * FROM accounts WHERE id = 1 FOR UPDATE").tables().writes()).containsExactly("public.accounts");
        assertThat(a("UPDATE \"Mixed\".\"Case\" SET x = 1").tables().writes()).containsExactly("Mixed.Case");
    }

    /** TRUNCATE leaves no write set in logical decoding: it must run everywhere, as DDL does (also in a block). */
    @Test
    void twoPhaseCommitIsTheProxysOwn() {
        // a client's COMMIT/ROLLBACK PREPARED could end a certified block's prepared transaction against the group's decision
        for (String sql : List.of("PREPARE TRANSACTION 'x'", "COMMIT PREPARED 'wanrep:a#1@a/1'", "rollback  prepared 'x'")) {
            UnitAnalysis r = a(sql);
            assertThat(r.route()).as(sql).isEqualTo(Route.REFUSED);
            assertThat(r.error().sqlState()).as(sql).isEqualTo("0A000");
        }
        assertThat(a("COMMIT").route()).isEqualTo(Route.COMMIT);
        assertThat(a("ROLLBACK").route()).isEqualTo(Route.ROLLBACK);
    }

    @Test
    void truncateRunsAtEverySite() {
        UnitAnalysis t = a("truncate table accounts, history");
        assertThat(t.route()).isEqualTo(Route.UPDATE);
        assertThat(t.catalogChange()).isTrue();
        assertThat(t.tables().writes()).contains("public.accounts", "public.history");
    }

    /** A call of a configured writing function in SQL the parser cannot follow is still an update, of every table. */
    @Test
    void unparseableQueryCallingAWritingFunctionIsAnUpdateOfEverything() {
        String sql = "SELECT * FROM transfer(1, 2, 30) AS t(a int) WINDOW w AS (PARTITION BY a ORDER BY a GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW EXCLUDE TIES)";
        UnitAnalysis u = a(sql);
        assertThat(u.route()).isEqualTo(Route.UPDATE);
        assertThat(u.tables().all()).isTrue();
        assertThat(a("SELECT * FROM accounts WINDOW w AS (PARTITION BY id ORDER BY id GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW EXCLUDE TIES)").route())
                .isEqualTo(Route.LOCAL);
    }

    /** Storing a non-deterministic default or body evaluates nothing; evaluating DDL stays refused everywhere. */
    @Test
    void ddlThatOnlyDefinesMayNameNonDeterministicFunctions() {
        for (SqlClassifier k : List.of(C, new SqlClassifier(() -> CAT, Map.of(), true))) {
            assertThat(k.analyze(List.of("CREATE TABLE s(id int PRIMARY KEY, at timestamptz DEFAULT clock_timestamp(), u uuid DEFAULT gen_random_uuid())")).route())
                    .isEqualTo(Route.UPDATE);
            assertThat(k.analyze(List.of("CREATE VIEW w AS SELECT clock_timestamp() AS at")).route()).isEqualTo(Route.UPDATE);
            assertThat(k.analyze(List.of("CREATE TABLE s2 AS SELECT gen_random_uuid() AS u")).route()).isEqualTo(Route.REFUSED);
            assertThat(k.analyze(List.of("ALTER TABLE accounts ADD COLUMN at timestamptz DEFAULT clock_timestamp()")).route()).isEqualTo(Route.REFUSED);
        }
        // under a write-set policy DML may use them: one site executes it and ships the rows
        SqlClassifier ws = new SqlClassifier(() -> CAT, Map.of(), true);
        assertThat(ws.analyze(List.of("UPDATE accounts SET token = gen_random_uuid()")).route()).isEqualTo(Route.UPDATE);
        assertThat(ws.analyze(List.of("INSERT INTO history VALUES (1, clock_timestamp())")).route()).isEqualTo(Route.UPDATE);
    }

    @Test
    void viewsCascadesTriggersSequencesAndFunctions() {
        assertThat(a("SELECT * FROM rich").tables().reads()).containsExactly("public.accounts");
        UnitAnalysis del = a("DELETE FROM orders WHERE id = 3");
        assertThat(del.tables().writes()).containsExactlyInAnyOrder("public.orders", "public.items", "public.orders_id_seq");
        assertThat(a("INSERT INTO history VALUES (1, 2)").tables().reads()).contains("public.accounts");   // the FK check
        assertThat(a("INSERT INTO audit VALUES (1)").tables().all()).isTrue();                            // user trigger
        assertThat(a("SELECT my_side_effect(3)").route()).isEqualTo(Route.UPDATE);                        // unknown function
        assertThat(a("SELECT my_side_effect(3)").tables().all()).isTrue();
        UnitAnalysis t = a("SELECT transfer(1, 2, 30)");
        assertThat(t.route()).isEqualTo(Route.UPDATE);
        assertThat(t.tables().writes()).containsExactlyInAnyOrder("public.accounts", "public.history");
        assertThat(a("SELECT nextval('orders_id_seq')").tables().all()).isTrue();
        assertThat(a("SELECT lower(name), abs(x)::numeric(10,2) FROM items").route()).isEqualTo(Route.LOCAL);
    }

    @Test
    void nonDeterminismIsRefusedInUpdatesOnly() {
        UnitAnalysis r = a("INSERT INTO history VALUES (1, clock_timestamp())");
        assertThat(r.route()).isEqualTo(Route.REFUSED);
        assertThat(r.error().sqlState()).isEqualTo("0A000");
        assertThat(r.error().hint()).contains("primary-copy");
        assertThat(a("UPDATE accounts SET token = gen_random_uuid()").route()).isEqualTo(Route.REFUSED);
        assertThat(a("SELECT clock_timestamp()").route()).isEqualTo(Route.LOCAL);
        assertThat(a("UPDATE accounts SET balance = random() * 10").random()).isTrue();
    }

    /** Values that belong to one site (system columns, OIDs, server settings, catalogs and statistics) are refused in updates. */
    @Test
    void siteLocalValuesAreRefusedInUpdates() {
        for (String sql : List.of(
                "INSERT INTO history SELECT id, xmin::text FROM accounts",
                "UPDATE accounts SET note = ctid::text WHERE id = 1",
                "INSERT INTO history VALUES (1, 'accounts'::regclass::oid)",
                "INSERT INTO history VALUES (1, CAST('accounts'::regclass AS oid))",
                "INSERT INTO history VALUES (1, current_setting('port'))",
                "INSERT INTO history VALUES (1, current_setting(name)) ",
                "INSERT INTO history SELECT 1, count(*) FROM pg_stat_activity",
                "INSERT INTO history SELECT 1, setting FROM pg_catalog.pg_settings WHERE name = 'port'",
                "INSERT INTO history SELECT 1, relname FROM pg_class",
                "CREATE TABLE snap AS SELECT * FROM pg_stat_activity")) {
            UnitAnalysis r = a(sql);
            assertThat(r.route()).as(sql).isEqualTo(Route.REFUSED);
            assertThat(r.error().sqlState()).as(sql).isEqualTo("0A000");
        }
        // the same read alike everywhere: carried and custom settings, a column merely labelled so, definitions, queries
        for (String sql : List.of(
                "INSERT INTO history VALUES (1, current_setting('TimeZone'))",
                "INSERT INTO history VALUES (1, current_setting('app.user_id'))",
                "INSERT INTO history SELECT id, balance AS xmin FROM accounts",
                "INSERT INTO history VALUES (1, 'it''s xmin and pg_class')",
                "CREATE VIEW sessions AS SELECT count(*) FROM pg_stat_activity"))
            assertThat(a(sql).route()).as(sql).isEqualTo(Route.UPDATE);
        // rows picked or numbered by each replica's physical order
        for (String sql : List.of(
                "DELETE FROM history WHERE id IN (SELECT id FROM history LIMIT 3)",
                "UPDATE accounts SET balance = 0 WHERE CURRENT OF c",
                "UPDATE accounts SET balance = 0 WHERE id = (SELECT id FROM accounts ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)",
                "SELECT * FROM accounts WHERE id = 1 FOR UPDATE NOWAIT",
                "COPY history FROM '/tmp/h.csv' WITH (FORMAT csv)",
                "COPY history FROM PROGRAM 'cat /tmp/h.csv'",
                "INSERT INTO history VALUES (1, pg_read_file('/etc/hostname'))",
                "INSERT INTO history VALUES (1, pg_relation_size('accounts'))",
                "UPDATE accounts SET balance = 0 WHERE id = (SELECT id FROM accounts OFFSET 2 FETCH FIRST 1 ROW ONLY)",
                "INSERT INTO orders(note) SELECT name FROM items"))
            assertThat(a(sql).route()).as(sql).isEqualTo(Route.REFUSED);
        for (String sql : List.of(
                "DELETE FROM history WHERE id IN (SELECT id FROM history ORDER BY id LIMIT 3)",
                "INSERT INTO orders(note) SELECT name FROM items ORDER BY id",
                "INSERT INTO history SELECT id, name FROM items",          // no sequence: the set is the same everywhere
                "INSERT INTO orders(note) VALUES ('a'), ('b')",
                "INSERT INTO orders(note) SELECT 'n' || g FROM generate_series(1, 10) g",
                "COPY history FROM STDIN WITH (FORMAT csv)"))
            assertThat(a(sql).route()).as(sql).isEqualTo(Route.UPDATE);
        assertThat(a("SELECT * FROM items LIMIT 3").route()).isEqualTo(Route.LOCAL);
        // one shape, two verdicts: the setting's name is a literal
        assertThat(a("UPDATE accounts SET note = current_setting('app.x') WHERE id = 1").route()).isEqualTo(Route.UPDATE);
        assertThat(a("UPDATE accounts SET note = current_setting('port') WHERE id = 2").route()).isEqualTo(Route.REFUSED);
        assertThat(a("SELECT xmin, ctid FROM accounts").route()).isEqualTo(Route.LOCAL);
        assertThat(a("SELECT count(*) FROM pg_stat_activity").route()).isEqualTo(Route.LOCAL);
    }

    @Test
    void textsThatDifferOnlyInConstantsShareOneAnalysis() {
        assertThat(SqlText.normalize("UPDATE t SET v = v + 1 WHERE id = 42 AND s = 'x''y'")).isEqualTo("UPDATE t SET v = v + ? WHERE id = ? AND s = ?");
        assertThat(SqlText.normalize("SELECT t1.c2 FROM t1")).isEqualTo("SELECT t1.c2 FROM t1");
        // identifiers, escapes, comments and bodies are not constants: different tables never share a shape
        assertThat(SqlText.normalize("UPDATE \"t 1\" SET v = 2")).isEqualTo("UPDATE \"t 1\" SET v = ?");
        assertThat(SqlText.normalize("UPDATE \"t \"\"9\" SET v = 2")).isEqualTo("UPDATE \"t \"\"9\" SET v = ?");
        assertThat(SqlText.normalize("SELECT E'it\\'s 7'; UPDATE t2 SET v = 1")).isEqualTo("SELECT ?; UPDATE t2 SET v = ?");
        assertThat(SqlText.normalize("SELECT 1 /* t 3 */ FROM t")).isEqualTo("SELECT ? /* t 3 */ FROM t");
        assertThat(SqlText.normalize("SELECT $b$ 5 $b$, $1")).isEqualTo("SELECT $b$ 5 $b$, $1");
        assertThat(SqlText.normalize("SELECT 'open")).isEqualTo("SELECT 'open");
        assertThat(C.analyze(List.of("UPDATE \"t 1\" SET v = 2")).tables().writes()).containsExactly("public.t 1");
        assertThat(C.analyze(List.of("UPDATE \"t 2\" SET v = 2")).tables().writes()).containsExactly("public.t 2");
        assertThat(SqlText.functionCalls("INSERT INTO t(a) VALUES (f(1), 'g(2)', x::numeric(3,1)) -- h(3)")).containsExactly("f");
        // a backslash-escaped quote does not end an E'' literal: the call after it is still seen
        assertThat(SqlText.functionCalls("SELECT E'\\'', my_writer(1), 'x''y', other(2)")).containsExactly("my_writer", "other");
        assertThat(a("SELECT E'\\'', my_side_effect(3)").route()).isEqualTo(Route.UPDATE);
    }

    /** A column-alias list after a function call (DBT-1 style) is not a call of a function named like the alias. */
    @Test
    void columnAliasListsAreNotCalls() {
        assertThat(SqlText.functionCalls("SELECT * FROM home(5,10) AS l(a char(15))")).containsExactly("home");
        assertThat(SqlText.functionCalls("SELECT * FROM home(5,10) AS l (a int, b text)")).containsExactly("home");
        assertThat(SqlText.functionCalls("SELECT * FROM f(1) l(a int)")).containsExactly("f");
        assertThat(SqlText.functionCalls("SELECT * FROM app.f(g(1), 'x)') l(a int) JOIN h(2) AS m(b int) ON l.a = m.b")).containsExactly("app.f", "g", "h");
        assertThat(SqlText.functionCalls("SELECT * FROM getBestSellers(5) AS l(i_id numeric(10), i_title varchar(60), a_fname varchar(20), a_lname varchar(20))"))
                .containsExactly("getbestsellers");
        assertThat(SqlText.functionCalls("SELECT * FROM (SELECT 1) s(x), (VALUES (2)) v(y)")).isEmpty();
        // what follows other parentheses is still a call
        assertThat(SqlText.functionCalls("SELECT DISTINCT ON (a) f(b) FROM t")).containsExactly("f");
        assertThat(SqlText.functionCalls("SELECT x FROM t WHERE (a > 1) AND g(a)")).containsExactly("g");
        SqlClassifier k = new SqlClassifier(() -> CAT, Map.of("public.home", TableSet.of(Set.of("public.items"), Set.of())));
        UnitAnalysis home = k.analyze(List.of("SELECT * FROM home(5,10) AS l(a char(15), b int)"));
        assertThat(home.route()).isEqualTo(Route.LOCAL);
        assertThat(home.tables().all()).isFalse();
        assertThat(home.tables().reads()).containsExactly("public.items");
        assertThat(k.analyze(List.of("SELECT * FROM home(5,10) l (a char(15))")).route()).isEqualTo(Route.LOCAL);
    }

    @Test
    void unparseableMeansEveryTable() {
        assertThat(a("UPDATE accounts SET balance = balance + 1 WHERE id IN (SELECT FROM WHERE)").tables().all()).isTrue();
    }

    @Test
    void catalogReadFromPostgres() throws Exception {
        try (LocalPostgres pg = LocalPostgres.startTemporary(); Connection c = pg.connect(); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE parent(id serial primary key, name text)");
            st.execute("CREATE TABLE child(id int primary key, p int references parent(id) ON DELETE CASCADE)");
            st.execute("CREATE TABLE stamped(id int primary key, at timestamptz default clock_timestamp())");
            st.execute("CREATE VIEW v AS SELECT c.id FROM child c JOIN parent p ON p.id = c.p");
            st.execute("CREATE FUNCTION noop() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RETURN NEW; END$$");
            st.execute("CREATE TRIGGER t BEFORE INSERT ON child FOR EACH ROW EXECUTE FUNCTION noop()");
            Catalog cat = Catalog.load(c);
            SqlClassifier k = new SqlClassifier(() -> cat, Map.of());
            assertThat(k.analyze(List.of("SELECT * FROM v")).tables().reads()).containsExactlyInAnyOrder("public.child", "public.parent");
            assertThat(k.analyze(List.of("DELETE FROM parent WHERE id = 1")).tables().all()).isTrue();   // cascades into a triggered table
            assertThat(k.analyze(List.of("INSERT INTO parent(name) VALUES ('x')")).tables().writes()).contains("public.parent_id_seq");
            assertThat(k.analyze(List.of("INSERT INTO stamped(id) VALUES (1)")).route()).isEqualTo(Route.REFUSED);
            assertThat(cat.builtinFunctions).contains("sum", "now", "lower");
        }
    }

    /**
     * Whether a statement may run code the classifier does not read is kept by the text's shape: texts that differ only
     * in their constants get the same verdict, a shape with another call its own, and a changed catalog is read again.
     */
    @Test
    void unreadCodeVerdictsByShape() {
        Catalog cat = Catalog.empty().relation("public.accounts").builtins(Set.of("abs", "lower"));
        Catalog[] current = {cat};
        SqlClassifier c = new SqlClassifier(() -> current[0], Map.of());
        TableSet t = TableSet.of(Set.of(), Set.of("public.accounts"));
        assertThat(c.mayRunUnreadCode(List.of("UPDATE accounts SET b = abs(-1) WHERE id = 1"), t)).isFalse();
        assertThat(c.mayRunUnreadCode(List.of("UPDATE accounts SET b = abs(-2) WHERE id = 7"), t)).isFalse();
        assertThat(c.mayRunUnreadCode(List.of("UPDATE accounts SET b = mine(-2) WHERE id = 7"), t)).isTrue();
        assertThat(c.mayRunUnreadCode(List.of("UPDATE accounts SET b = 'mine(-2)' WHERE id = 7"), t)).isFalse();
        assertThat(c.mayRunUnreadCode(List.of("UPDATE accounts SET b = abs(1) WHERE id = 8", "UPDATE accounts SET b = mine(1) WHERE id = 9"), t)).isTrue();
        assertThat(c.mayRunUnreadCode(List.of("UPDATE accounts SET b = nextval('s') WHERE id = 1"), t)).isTrue();
        // abs() is a user's function in the next catalog: the kept verdict must not outlive the old one
        current[0] = Catalog.empty().relation("public.accounts").builtins(Set.of("lower"));
        c.catalogChanged();
        assertThat(c.mayRunUnreadCode(List.of("UPDATE accounts SET b = abs(-3) WHERE id = 2"), t)).isTrue();
    }
}
