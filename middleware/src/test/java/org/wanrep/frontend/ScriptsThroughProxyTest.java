package org.wanrep.frontend;

import org.junit.jupiter.api.Test;
import org.wanrep.pg.LocalPostgres;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What schema scripts and one-liners send, unchanged: a transaction block in one request
 * ({@code psql -c "begin; ...; commit;"}, refused with 0A000 before) and CREATE DATABASE (refused
 * with 25001 before: it cannot run inside our transaction block), replicated to every site.
 */
class ScriptsThroughProxyTest {
    @Test
    void aBlockInOneRequestAndCreateDatabase() throws Exception {
        try (TestCluster c = new TestCluster(List.of("a", "b", "c"), "lan", Map.of("delivery", "opt-safe"))) {
            int a = c.proxyPort(0);
            ClientTools.Result r = ClientTools.run(List.of(ClientTools.bin("psql").toString(), "-X", "-h", "127.0.0.1", "-p", Integer.toString(a),
                    "-U", "postgres", "-d", "postgres", "-c",
                    "begin; create table s (id int primary key, v text); insert into s values (1, 'one'); insert into s values (2, 'two'); commit;"), null, 60);
            assertThat(r.exit()).as(r.output()).isZero();
            assertThat(r.output()).contains("COMMIT");
            // an error inside: nothing of the block stays, and the client sees a failed block, as with PostgreSQL
            ClientTools.Result bad = ClientTools.run(List.of(ClientTools.bin("psql").toString(), "-X", "-h", "127.0.0.1", "-p", Integer.toString(a),
                    "-U", "postgres", "-d", "postgres", "-c", "begin; insert into s values (3, 'three'); insert into s values (1, 'dup'); commit;"), null, 60);
            assertThat(bad.exit()).isNotZero();
            assertThat(bad.output()).contains("duplicate key");
            ClientTools.Result after = ClientTools.psql(c.proxyPort(2), "select 'after:' || count(*) from s;\n");
            assertThat(after.output()).contains("after:2");
            // a read-only block in one request runs where it is sent
            ClientTools.Result ro = ClientTools.psql(a, "begin; select 'ro:' || count(*) from s; commit;\n");
            assertThat(ro.output()).contains("ro:2");

            ClientTools.Result db = ClientTools.psql(a, "CREATE DATABASE shop;\n");
            assertThat(db.output()).contains("CREATE DATABASE").doesNotContain("ERROR");
            c.awaitQuiescent();   // the origin answers after its own commit; the others follow in delivery order
            ClientTools.Result inShop = ClientTools.run(List.of(ClientTools.bin("psql").toString(), "-X", "-h", "127.0.0.1", "-p",
                    Integer.toString(c.proxyPort(1)), "-U", "postgres", "-d", "shop", "-c",
                    "create table item (id int primary key); insert into item values (7);"), null, 60);
            assertThat(inShop.exit()).as(inShop.output()).isZero();
            c.awaitQuiescent();
            for (LocalPostgres pg : c.pgs) {
                try (Connection x = pg.connect("shop"); Statement st = x.createStatement(); ResultSet rs = st.executeQuery("SELECT count(*) FROM item")) {
                    rs.next();
                    assertThat(rs.getInt(1)).isEqualTo(1);
                }
            }
            assertThat(c.check().values()).containsOnly("same");
        }
    }
}
