package org.wanrep.exec;

import org.junit.jupiter.api.Test;
import org.wanrep.wire.PayloadWriter;
import org.wanrep.wire.WireMessage;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Which replicated transactions make a pooled connection pay DISCARD ALL before it is reused. */
class LeavesSessionStateTest {
    private static WireMessage parse(String name, String sql) {
        return new PayloadWriter().cstring(name).cstring(sql).int16(0).message('P');
    }

    @Test
    void anOrdinaryUpdateLeavesNothing() {
        assertThat(WireTxnExecutor.leavesSessionState(List.of(WireMessage.query("UPDATE pgbench_accounts SET abalance = abalance + 5 WHERE aid = 7")))).isFalse();
        assertThat(WireTxnExecutor.leavesSessionState(List.of(parse("", "UPDATE t SET a = $1")))).isFalse();
    }

    @Test
    void sessionCommandsAndNamedStatementsLeaveState() {
        assertThat(WireTxnExecutor.leavesSessionState(List.of(WireMessage.query("SET search_path = x; UPDATE t SET a = 1")))).isTrue();
        assertThat(WireTxnExecutor.leavesSessionState(List.of(parse("s1", "UPDATE t SET a = $1")))).isTrue();
        assertThat(WireTxnExecutor.leavesSessionState(List.of(parse("", "SET search_path = x")))).isTrue();
        assertThat(WireTxnExecutor.leavesSessionState(List.of(WireMessage.of('P', new byte[0])))).isTrue();
    }
}
