package org.wanrep.exec;

import org.junit.jupiter.api.Test;
import org.wanrep.txn.RequestId;
import org.wanrep.txn.TxnRequest;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Our BEGIN on a pooled replica session: a reset, then only what differs from the session's reset values. */
class BeginSqlTest {
    private static TxnRequest request(Map<String, String> settings) {
        return new TxnRequest(new RequestId("a", 1), TxnRequest.Kind.AUTOCOMMIT, org.wanrep.lock.TableSet.allTables(), "postgres",
                List.of(org.wanrep.wire.WireMessage.query("UPDATE t SET v = 1")), 1_700_000_000_000_000L, 42, settings);
    }

    @Test
    void aPooledSessionSetsOnlyWhatDiffersFromItsResetValues() {
        Map<String, String> reset = Map.of("DateStyle", "ISO, MDY", "search_path", "\"$user\", public", "statement_timeout", "0", "lock_timeout", "0");
        String sql = WireTxnExecutor.beginSql(request(Map.of("DateStyle", "ISO, MDY", "search_path", "app, public", "app.tag", "blue")), reset);
        assertThat(sql).startsWith("BEGIN ISOLATION LEVEL READ COMMITTED; DISCARD SEQUENCES; RESET ALL; SELECT ");
        assertThat(sql).contains("pg_catalog.set_config('search_path', 'app, public', true)")
                .contains("pg_catalog.set_config('app.tag', 'blue', true)")
                .contains("pg_catalog.set_config('wanrep.ts', ")
                .contains("pg_catalog.setseed(")
                .doesNotContain("DateStyle")
                .doesNotContain("statement_timeout").doesNotContain("lock_timeout");
    }

    @Test
    void aSessionWithTimeoutsHasThemLifted() {
        Map<String, String> reset = Map.of("statement_timeout", "30000", "lock_timeout", "0");
        String sql = WireTxnExecutor.beginSql(request(Map.of()), reset);
        assertThat(sql).contains("pg_catalog.set_config('statement_timeout', '0', true)").doesNotContain("lock_timeout");
    }

    @Test
    void theClientsOwnBackendKeepsItsSessionAndOnlyLiftsTimeouts() {
        String sql = WireTxnExecutor.beginSql(request(Map.of("search_path", "app, public")), null);
        assertThat(sql).doesNotContain("RESET ALL").doesNotContain("search_path")
                .contains("pg_catalog.set_config('statement_timeout', '0', true), pg_catalog.set_config('lock_timeout', '0', true)");
    }

    /** The differing settings are kept per thread by the maps' identity: requests and sessions taking turns each get their own. */
    @Test
    void requestsAndSessionsTakingTurnsEachGetTheirOwnSettings() {
        Map<String, String> resetA = Map.of("search_path", "\"$user\", public", "statement_timeout", "0", "lock_timeout", "0");
        Map<String, String> resetB = Map.of("search_path", "app", "statement_timeout", "0", "lock_timeout", "0");
        Map<String, String> app = Map.of("search_path", "app"), plain = Map.of("search_path", "\"$user\", public");
        for (int round = 0; round < 3; round++) {
            assertThat(WireTxnExecutor.beginSql(request(app), resetA)).contains("set_config('search_path', 'app', true)");
            assertThat(WireTxnExecutor.sessionAsShipped(request(app), resetA)).isFalse();
            assertThat(WireTxnExecutor.beginSql(request(app), resetB)).doesNotContain("search_path");
            assertThat(WireTxnExecutor.sessionAsShipped(request(app), resetB)).isTrue();
            assertThat(WireTxnExecutor.beginSql(request(plain), resetB)).contains("set_config('search_path', '\"$user\", public', true)");
            assertThat(WireTxnExecutor.sessionAsShipped(request(plain), resetA)).isTrue();
            assertThat(WireTxnExecutor.sessionAsShipped(request(new java.util.HashMap<>(app)), resetB)).isTrue();
            assertThat(WireTxnExecutor.sessionAsShipped(request(new java.util.HashMap<>(app)), resetA)).isFalse();
        }
    }
}
