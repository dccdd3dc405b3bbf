package org.wanrep.txn;

import org.junit.jupiter.api.Test;
import org.wanrep.wire.WireMessage;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Which BEGINs and COMMITs a block's origin may answer itself (see {@code InteractiveBlock.beginPlain}, {@code commitCertified}). */
class PlainCommitTest {
    private static boolean plain(String sql) { return InteractiveBlock.isPlainCommit(List.of(WireMessage.query(sql))); }

    @Test
    void onlyASimpleQueryThatDoesNothingButCommit() {
        for (String s : List.of("COMMIT", "commit;", "END;", "  End Work ", "COMMIT TRANSACTION;", "end\ttransaction\n"))
            assertThat(plain(s)).as(s).isTrue();
        // more in the text, a chain, a comment, PREPARE's own commands: relayed for PostgreSQL to answer
        for (String s : List.of("COMMIT; SELECT 1", "COMMIT AND CHAIN", "COMMIT -- done", "/* x */ COMMIT", "COMMIT PREPARED 'x'",
                "ROLLBACK", "ENDS", "COMMITS", "commit;;"))
            assertThat(plain(s)).as(s).isFalse();
        // the extended protocol's COMMIT (pgjdbc) is relayed too
        assertThat(InteractiveBlock.isPlainCommit(List.of(WireMessage.query("COMMIT"), WireMessage.query("COMMIT")))).isFalse();
    }

    @Test
    void onlyASimpleQueryThatDoesNothingButBegin() {
        for (String s : List.of("BEGIN", "begin;", " Begin Work ", "BEGIN TRANSACTION;"))
            assertThat(InteractiveBlock.isPlainBegin(List.of(WireMessage.query(s)))).as(s).isTrue();
        for (String s : List.of("BEGIN ISOLATION LEVEL SERIALIZABLE", "BEGIN; UPDATE t SET v = 1", "BEGIN READ ONLY", "START TRANSACTION", "-- x\nBEGIN", "BEGINS"))
            assertThat(InteractiveBlock.isPlainBegin(List.of(WireMessage.query(s)))).as(s).isFalse();
    }
}
