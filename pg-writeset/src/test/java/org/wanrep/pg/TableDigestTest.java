package org.wanrep.pg;

import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.Statement;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class TableDigestTest {
    @Test
    void sameContentsSameDigestAnyDifferenceIsFound() throws Exception {
        try (LocalPostgres a = LocalPostgres.startTemporary(); LocalPostgres b = LocalPostgres.startTemporary();
             Connection ca = a.connect(); Connection cb = b.connect()) {
            for (Connection c : List.of(ca, cb)) {
                try (Statement st = c.createStatement()) {
                    st.execute("CREATE TABLE acct(id int primary key, bal numeric, note text)");
                    st.execute("CREATE TABLE log(v text)");   // no primary key
                    st.execute("CREATE TABLE clash(id int primary key, r text)");   // a column named like a row alias
                }
            }
            // same rows, inserted in different orders
            try (Statement st = ca.createStatement()) { st.execute("INSERT INTO acct VALUES (1, 10.5, 'x'), (2, 20, null); INSERT INTO log VALUES ('a'),('b')"); }
            try (Statement st = cb.createStatement()) { st.execute("INSERT INTO acct VALUES (2, 20, null), (1, 10.5, 'x'); INSERT INTO log VALUES ('b'),('a')"); }
            Map<String, String> v = TableDigest.compare(List.of("a", "b"), List.of(TableDigest.of(ca), TableDigest.of(cb)));
            assertThat(v).containsEntry("public.acct", "same").containsEntry("public.log", "same");
            try (Statement st = cb.createStatement()) { st.execute("UPDATE acct SET bal = 10.50001 WHERE id = 1"); }
            v = TableDigest.compare(List.of("a", "b"), List.of(TableDigest.of(ca), TableDigest.of(cb)));
            assertThat(v.get("public.acct")).startsWith("DIFFERENT");
            assertThat(v).containsEntry("public.log", "same");
            try (Statement st = ca.createStatement()) { st.execute("INSERT INTO clash VALUES (1, null), (2, 'x')"); }
            try (Statement st = cb.createStatement()) { st.execute("INSERT INTO clash VALUES (2, 'x')"); }
            v = TableDigest.compare(List.of("a", "b"), List.of(TableDigest.of(ca), TableDigest.of(cb)));
            assertThat(v.get("public.clash")).startsWith("DIFFERENT");
        }
    }

    /** Sequences (last_value, is_called) and function definitions are compared alongside tables. */
    @Test
    void sequencesAndFunctionsAreCompared() throws Exception {
        try (LocalPostgres a = LocalPostgres.startTemporary(); LocalPostgres b = LocalPostgres.startTemporary();
             Connection ca = a.connect(); Connection cb = b.connect()) {
            for (Connection c : List.of(ca, cb)) {
                try (Statement st = c.createStatement()) {
                    st.execute("CREATE SEQUENCE scid");
                    st.execute("CREATE FUNCTION f(x integer) RETURNS integer LANGUAGE sql AS 'SELECT x + 1'");
                    st.execute("SELECT nextval('scid')");
                }
            }
            Map<String, String> v = TableDigest.compare(List.of("a", "b"), List.of(TableDigest.of(ca), TableDigest.of(cb)));
            assertThat(v).containsEntry("sequence public.scid", "same").containsEntry("function public.f(x integer)", "same");
            try (Statement st = cb.createStatement()) { st.execute("SELECT nextval('scid')"); }
            v = TableDigest.compare(List.of("a", "b"), List.of(TableDigest.of(ca), TableDigest.of(cb)));
            assertThat(v.get("sequence public.scid")).startsWith("DIFFERENT");
            try (Statement st = ca.createStatement()) { st.execute("SELECT setval('scid', 2); CREATE OR REPLACE FUNCTION f(x integer) RETURNS integer LANGUAGE sql AS 'SELECT x + 2'"); }
            v = TableDigest.compare(List.of("a", "b"), List.of(TableDigest.of(ca), TableDigest.of(cb)));
            assertThat(v).containsEntry("sequence public.scid", "same");
            assertThat(v.get("function public.f(x integer)")).startsWith("DIFFERENT");
            try (Statement st = cb.createStatement()) { st.execute("SELECT setval('scid', 2, false)"); }   // same value, not called
            v = TableDigest.compare(List.of("a", "b"), List.of(TableDigest.of(ca), TableDigest.of(cb)));
            assertThat(v.get("sequence public.scid")).startsWith("DIFFERENT");
        }
    }
}
