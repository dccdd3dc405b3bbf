package org.wanrep.sql;

import org.junit.jupiter.api.Test;
import org.wanrep.lock.LockMode;
import org.wanrep.lock.TableSet;
import org.wanrep.pg.LocalPostgres;

import java.sql.Connection;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** Row-level conflict classes: which statements show their rows, and every refusal that keeps a table whole. */
class RowKeysTest {
    static final Catalog CAT = Catalog.empty().keysKnown()
            .relation("public.accounts").primaryKey("public.accounts", "id:int4")
            .relation("public.pairs").primaryKey("public.pairs", "a:int4", "b:text")
            .relation("public.users").primaryKey("public.users", "id:int8").unique("public.users", "email")
            .relation("public.history")                                     // no key at all
            .relation("public.orders").primaryKey("public.orders", "id:int4").defaultSequence("public.orders", "public.orders_id_seq")
            .relation("public.items").primaryKey("public.items", "id:int4").foreignKey("public.items", "public.orders", true)
            .relation("public.audit").primaryKey("public.audit", "id:int4").trigger("public.audit")
            .relation("public.parted").primaryKey("public.parted", "id:int4").wholeOnly("public.parted")
            .relation("public.tree").primaryKey("public.tree", "id:int4").foreignKey("public.tree", "public.tree", true)
            .relation("public.stamped").primaryKey("public.stamped", "at:timestamptz")
            .builtins(Set.of("abs", "count", "sum"));
    static final SqlClassifier C = new SqlClassifier(() -> CAT, Map.of());

    private static UnitAnalysis a(String... sql) { return C.analyze(List.of(sql)); }
    private static Map<String, Map<String, LockMode>> rows(String... sql) { return a(sql).tables().rows(); }
    private static Map<String, Map<String, LockMode>> w(String table, String... keys) {
        Map<String, LockMode> k = new java.util.HashMap<>();
        for (String key : keys) k.put(key, LockMode.WRITE);
        return Map.of(table, k);
    }

    @Test
    void equalityOnTheWholePrimaryKeyLocksRows() {
        assertThat(rows("UPDATE accounts SET balance = balance + 1 WHERE id = 5")).isEqualTo(w("public.accounts", "5"));
        assertThat(rows("DELETE FROM accounts WHERE id IN (1, 2, 2)")).isEqualTo(w("public.accounts", "1", "2"));
        assertThat(rows("UPDATE accounts SET balance = 0 WHERE id = 5 AND balance > 10")).isEqualTo(w("public.accounts", "5"));
        assertThat(rows("UPDATE accounts SET balance = 0 WHERE (id = 5) AND id IN (5, 6)")).isEqualTo(w("public.accounts", "5"));
        assertThat(rows("UPDATE pairs SET v = 1 WHERE a = 1 AND b = 'x''y'")).isEqualTo(w("public.pairs", "1\0x'y"));
        assertThat(rows("UPDATE pairs SET v = 1 WHERE a = 2 AND b IN ('p', 'q')")).isEqualTo(w("public.pairs", "2\0p", "2\0q"));
        assertThat(rows("SELECT balance FROM accounts WHERE id = 7")).isEqualTo(Map.of("public.accounts", Map.of("7", LockMode.READ)));
        assertThat(rows("SELECT balance FROM accounts WHERE id = 7 FOR UPDATE")).isEqualTo(w("public.accounts", "7"));
        assertThat(rows("INSERT INTO accounts (id, balance) VALUES (7, 0)")).isEqualTo(w("public.accounts", "7"));
        assertThat(rows("INSERT INTO accounts (balance, id) VALUES (0, 7), (1, 8)")).isEqualTo(w("public.accounts", "7", "8"));
        // fresh rows of a table without unique keys: a write intention on the table, no row
        UnitAnalysis h = a("INSERT INTO history (tid, bid, aid, delta) VALUES (1, 2, 3, 4)");
        assertThat(h.tables().rows()).isEqualTo(Map.of("public.history", Map.of()));
        assertThat(h.tables().writes()).containsExactly("public.history");
    }

    /**
     * The replicated clock (TimeRewriting's expression for now() / CURRENT_TIMESTAMP, which every
     * update carries by the time it is classified) computes a value, not which rows: pgbench's
     * tpcb-like history insert and a keyed update stamping a time keep their row-level classes.
     */
    @Test
    void theReplicatedClockKeepsRowLocks() {
        String ins = TimeRewriting.rewrite("INSERT INTO history (tid, bid, aid, delta, mtime) VALUES (1, 2, 3, 4, CURRENT_TIMESTAMP)");
        assertThat(ins).contains("wanrep.ts");
        assertThat(rows(ins)).isEqualTo(Map.of("public.history", Map.of()));
        String upd = TimeRewriting.rewrite("UPDATE accounts SET balance = 1, at = now() WHERE id = 5");
        assertThat(rows(upd)).isEqualTo(w("public.accounts", "5"));
        // a key compared with the clock is still not a plain key
        assertThat(rows(TimeRewriting.rewrite("UPDATE stamped SET v = 1 WHERE at = now()"))).isEmpty();
        // any other call still keeps the table whole
        assertThat(rows("INSERT INTO history (tid, delta) VALUES (1, abs(-4))")).isEmpty();
    }

    /**
     * pgbench's tpcb-like history insert, as every update carries it (now() rewritten to the replicated clock), is
     * parsed once, not once per transaction (it was: the clock's current_setting() made every text count as one whose
     * verdict depends on its literal, a third of the origin's CPU under pgbench). A text of the same shape that reads
     * another setting is still checked whole and refused.
     */
    @Test
    void theReplicatedClockDoesNotDefeatTheShapeCache() {
        SqlClassifier c = new SqlClassifier(() -> CAT, Map.of());
        java.util.function.IntFunction<String> ins = i -> TimeRewriting.rewrite(
                "INSERT INTO history (tid, bid, aid, delta, mtime) VALUES (" + i + ", 2, 3, 4, CURRENT_TIMESTAMP)");
        assertThat(c.analyze(List.of(ins.apply(1))).tables().rows()).isEqualTo(Map.of("public.history", Map.of()));
        long parses = SqlClassifier.PARSES.get();
        for (int i = 2; i < 50; i++) assertThat(c.analyze(List.of(ins.apply(i))).tables().rows()).isEqualTo(Map.of("public.history", Map.of()));
        assertThat(SqlClassifier.PARSES.get()).isEqualTo(parses);
        String sameShapeOtherSetting = ins.apply(7).replace("'wanrep.ts'", "'data_directory'");
        assertThat(sameShapeOtherSetting).contains("current_setting('data_directory', true)");
        assertThat(c.analyze(List.of(sameShapeOtherSetting)).route()).isEqualTo(Route.REFUSED);
    }

    /**
     * A shape is parsed once: later texts of it take their keys from their own literals, with the same
     * refusals as a parsed text (a fraction, an E'' string), and without parsing.
     */
    @Test
    void aShapeSeenBeforeReadsEachTextsKeysWithoutParsing() {
        SqlClassifier c = new SqlClassifier(() -> CAT, Map.of());
        java.util.function.Function<String, Map<String, Map<String, LockMode>>> rows = sql -> c.analyze(List.of(sql)).tables().rows();
        assertThat(rows.apply("UPDATE accounts SET balance = balance + 3 WHERE id = 7")).isEqualTo(w("public.accounts", "7"));
        assertThat(rows.apply("UPDATE pairs SET v = 1 WHERE a = 1 AND b = 'x'")).isEqualTo(w("public.pairs", "1\0x"));
        assertThat(rows.apply("INSERT INTO accounts (balance, id) VALUES (0, 7), (1, 8)")).isEqualTo(w("public.accounts", "7", "8"));
        long parses = SqlClassifier.PARSES.get();
        for (int i = 0; i < 50; i++)
            assertThat(rows.apply("UPDATE accounts SET balance = balance + " + i + " WHERE id = " + (1000 + i))).isEqualTo(w("public.accounts", Integer.toString(1000 + i)));
        assertThat(rows.apply("UPDATE accounts SET balance = balance + 3 WHERE id = '0042'")).isEqualTo(w("public.accounts", "42"));
        assertThat(rows.apply("UPDATE accounts SET balance = balance + 3 WHERE id = 5.0")).isEmpty();
        assertThat(rows.apply("UPDATE accounts SET balance = balance + 3 WHERE id = ' 5'")).isEmpty();
        assertThat(rows.apply("UPDATE pairs SET v = 2 WHERE a = 3 AND b = 'it''s'")).isEqualTo(w("public.pairs", "3\0it's"));
        assertThat(rows.apply("UPDATE pairs SET v = 2 WHERE a = 3 AND b = E'x'")).isEmpty();
        assertThat(rows.apply("UPDATE pairs SET v = 2 WHERE a = 3 AND b = 'a\\b'")).isEmpty();
        assertThat(rows.apply("INSERT INTO accounts (balance, id) VALUES (5, 9), (6, 10)")).isEqualTo(w("public.accounts", "9", "10"));
        assertThat(SqlClassifier.PARSES.get()).isEqualTo(parses);
        // other shapes are parsed; prefixed strings and exponents glued to a number keep the table whole
        assertThat(rows.apply("UPDATE pairs SET v = 2 WHERE a = 3 AND b = N'x'")).isEmpty();
        assertThat(rows.apply("UPDATE accounts SET balance = 0 WHERE id = 1e3")).isEmpty();
    }

    /** 5, '5' and '05' name the same integer key; a cast or an odd literal keeps the table whole. */
    @Test
    void literalsAreNormalisedOrRefused() {
        assertThat(rows("UPDATE accounts SET balance = 0 WHERE id = '5'")).isEqualTo(w("public.accounts", "5"));
        assertThat(rows("UPDATE accounts SET balance = 0 WHERE id = '05'")).isEqualTo(w("public.accounts", "5"));
        assertThat(rows("UPDATE accounts SET balance = 0 WHERE 5 = id")).isEqualTo(w("public.accounts", "5"));
        assertThat(rows("UPDATE accounts SET balance = 0 WHERE id = 5::int")).isEmpty();
        assertThat(rows("UPDATE accounts SET balance = 0 WHERE id = ' 5'")).isEmpty();
        assertThat(rows("UPDATE accounts SET balance = 0 WHERE id = 5.0")).isEmpty();
        assertThat(rows("UPDATE pairs SET v = 1 WHERE a = 1 AND b = E'x\\ny'")).isEmpty();
        assertThat(rows("UPDATE pairs SET v = 1 WHERE a = 1 AND b = 5")).isEmpty();
        assertThat(rows("UPDATE stamped SET v = 1 WHERE at = '2024-01-01'")).isEmpty();   // not an integer or text key
    }

    @Test
    void statementsThatDoNotShowTheirRowsLockTheTable() {
        for (String sql : List.of(
                "UPDATE accounts SET balance = 0",
                "UPDATE accounts SET balance = 0 WHERE id > 5",
                "UPDATE accounts SET balance = 0 WHERE id = 5 OR id = 6",
                "UPDATE accounts SET balance = 0 WHERE NOT id = 5",
                "UPDATE accounts SET balance = 0 WHERE id = $1",
                "UPDATE accounts SET balance = 0 WHERE id = abs(-5)",
                "UPDATE accounts SET balance = 0 WHERE id = (SELECT max(id) FROM accounts)",
                "UPDATE accounts SET balance = 0 WHERE id IN (SELECT id FROM users)",
                "UPDATE accounts SET id = 6 WHERE id = 5",                    // moves the row to another key
                "UPDATE accounts a SET balance = 0 FROM users u WHERE a.id = 5 AND u.id = 5",
                "UPDATE pairs SET v = 1 WHERE a = 1",                         // part of a composite key
                "UPDATE pairs SET v = 1 WHERE b IN ('p', 'q') AND a = 2",     // JSqlParser 5.3 reads the AND into the IN list: whole, safely
                "UPDATE users SET name = 'n' WHERE email = 'x'",              // another unique key reaches the row
                "UPDATE users SET email = 'y' WHERE id = 1",                  // a unique check across rows
                "INSERT INTO users (id, email) VALUES (1, 'x')",
                "INSERT INTO accounts VALUES (7, 0)",                         // no column list
                "INSERT INTO accounts (balance) VALUES (0)",                  // key from a default
                "INSERT INTO accounts (id, balance) VALUES (7, 0) ON CONFLICT (id) DO UPDATE SET balance = 1",
                "INSERT INTO accounts (id, balance) SELECT id, 0 FROM users",
                "DELETE FROM accounts",
                "UPDATE accounts SET balance = (SELECT balance FROM accounts WHERE id = 6) WHERE id = 5",   // reads another row
                "SELECT balance FROM accounts WHERE id = 5 AND EXISTS (TABLE accounts)",
                "INSERT INTO accounts (id, balance) VALUES (7, (SELECT balance FROM accounts WHERE id = 1))",
                "INSERT INTO history (a, b) VALUES (1, (SELECT b FROM history LIMIT 1))",   // no key, but reads the table
                "DELETE FROM tree WHERE id = 1",                              // a self-reference cascades to other rows
                "DELETE FROM parted WHERE id = 1",                            // partitions, inheritance, rules, RLS
                "SELECT count(*) FROM accounts WHERE id = 5",
                "SELECT * FROM accounts JOIN users USING (id) WHERE id = 5",
                "WITH x AS (DELETE FROM users WHERE id = 1 RETURNING id) UPDATE accounts SET balance = 0 WHERE id = 1")) {
            UnitAnalysis u = a(sql);
            assertThat(u.tables().rows()).as(sql).isEmpty();
        }
        assertThat(a("UPDATE audit SET v = 1 WHERE id = 1").tables().all()).isTrue();   // a trigger: as today
    }

    /** Foreign keys, cascades and sequences keep the other tables whole; the target still goes by row. */
    @Test
    void otherTablesAStatementReachesStayWhole() {
        TableSet t = a("INSERT INTO items (id, order_id) VALUES (3, 1)").tables();
        assertThat(t.rows()).isEqualTo(w("public.items", "3"));
        assertThat(t.reads()).contains("public.orders");                 // the FK check reads the parent: a table read lock
        TableSet d = a("DELETE FROM orders WHERE id = 1").tables();
        assertThat(d.rows()).isEqualTo(w("public.orders", "1"));
        assertThat(d.writes()).contains("public.items");                // cascades write the children whole
        assertThat(d.rows()).doesNotContainKey("public.items");
    }

    /** A request locks the union; a table one statement reaches without rows is locked whole. */
    @Test
    void severalStatementsUniteAndAnyWholeAccessWins() {
        assertThat(rows("UPDATE accounts SET balance = 1 WHERE id = 1", "UPDATE accounts SET balance = 2 WHERE id = 2"))
                .isEqualTo(w("public.accounts", "1", "2"));
        assertThat(rows("UPDATE accounts SET balance = 1 WHERE id = 1", "SELECT sum(balance) FROM accounts")).isEmpty();
        Map<String, Map<String, LockMode>> mixed = rows("UPDATE accounts SET balance = 1 WHERE id = 1", "UPDATE users SET name = 'n'");
        assertThat(mixed).isEqualTo(w("public.accounts", "1"));
        // the classifier caches analyses by shape without literals: the keys must still follow the literals
        assertThat(rows("UPDATE accounts SET balance = 3 WHERE id = 3")).isEqualTo(w("public.accounts", "3"));
        assertThat(rows("UPDATE accounts SET balance = 4 WHERE id = 4")).isEqualTo(w("public.accounts", "4"));
    }

    /** The keys come from pg_catalog: primary keys with their types, other unique indexes, tables locked whole. */
    @Test
    void catalogReadsKeysFromPostgres() throws Exception {
        try (LocalPostgres pg = LocalPostgres.startTemporary(); Connection c = pg.connect();
             java.sql.Statement st = c.createStatement()) {
            st.execute("CREATE TABLE acc (id int PRIMARY KEY, email text UNIQUE, v int)");
            st.execute("CREATE TABLE pair (b text, a bigint, v int, PRIMARY KEY (a, b))");
            st.execute("CREATE TABLE par (id int PRIMARY KEY)");
            st.execute("CREATE TABLE kid () INHERITS (par)");
            st.execute("CREATE UNIQUE INDEX ON pair (lower(b))");
            Catalog k = Catalog.load(c);
            assertThat(k.primaryKeys.get("public.acc")).containsExactly("id:int4");
            assertThat(k.primaryKeys.get("public.pair")).containsExactly("a:int8", "b:text");
            assertThat(k.otherUnique.get("public.acc")).containsExactly("email");
            assertThat(k.otherUnique.get("public.pair")).contains("*");
            assertThat(k.wholeOnly).contains("public.par", "public.kid");
            SqlClassifier sc = new SqlClassifier(() -> k, Map.of());
            assertThat(sc.analyze(List.of("UPDATE acc SET v = 1 WHERE id = 1")).tables().rows()).isEqualTo(w("public.acc", "1"));
            assertThat(sc.analyze(List.of("UPDATE pair SET b = 'z' WHERE a = 1 AND b = 'x'")).tables().rows()).isEmpty();
            // an expression unique index may see any column change; deleting takes no unique check
            assertThat(sc.analyze(List.of("UPDATE pair SET v = 2 WHERE a = 1 AND b = 'x'")).tables().rows()).isEmpty();
            assertThat(sc.analyze(List.of("DELETE FROM pair WHERE a = 1 AND b = 'x'")).tables().rows()).isEqualTo(w("public.pair", "1\0x"));
            // an identity column's sequence has no default expression: two inserts that name no key must still conflict
            st.execute("CREATE TABLE idents (id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY, who text)");
            st.execute("CREATE TABLE serials (id serial PRIMARY KEY, who text)");
            // no key at all: the insert locks no row of the table, so only the sequence makes two of them conflict
            st.execute("CREATE TABLE idlog (id int GENERATED ALWAYS AS IDENTITY, who text)");
            Catalog k2 = Catalog.load(c);
            SqlClassifier sc2 = new SqlClassifier(() -> k2, Map.of());
            for (String t : List.of("idents", "serials", "idlog")) {
                org.wanrep.lock.TableSet ins = sc2.analyze(List.of("INSERT INTO " + t + " (who) VALUES ('x')")).tables();
                assertThat(ins.writes()).as(t).contains("public." + t + "_id_seq");
                assertThat(ins.rows()).as(t).doesNotContainKey("public." + t + "_id_seq");
                assertThat(sc2.advancesSequence(ins)).as(t).isTrue();
            }
            assertThat(sc2.advancesSequence(sc2.analyze(List.of("UPDATE acc SET v = 1 WHERE id = 1")).tables())).isFalse();
        }
    }
}
