package org.wanrep.frontend;

import org.junit.jupiter.api.Test;
import org.wanrep.wire.Messages;
import org.wanrep.wire.PayloadWriter;
import org.wanrep.wire.WireMessage;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** A session's named statements: the texts a request runs, the Parses it must carry elsewhere, the bytes they hold. */
class NamedStatementsTest {
    private static WireMessage parse(String name, String sql, int... types) {
        PayloadWriter w = new PayloadWriter().cstring(name).cstring(sql).int16(types.length);
        for (int t : types) w.int32(t);
        return w.message('P');
    }

    /** Bind of {@code statement} to the unnamed portal with text-format values. */
    private static WireMessage bind(String statement, String... values) {
        PayloadWriter w = new PayloadWriter().cstring("").cstring(statement).int16(0).int16(values.length);
        for (String v : values) {
            byte[] b = v.getBytes(java.nio.charset.StandardCharsets.UTF_8);
            w.int32(b.length).bytes(b);
        }
        return w.int16(0).message('B');
    }

    private static final WireMessage EXECUTE = new PayloadWriter().cstring("").int32(0).message('E');

    @Test void textsComeFromQueriesAndFromTheStatementsExecuted() {
        NamedStatements s = new NamedStatements();
        s.note(List.of(parse("upd", "UPDATE t SET v = v + 1 WHERE id = $1", 23), Messages.SYNC));
        List<WireMessage> unit = List.of(bind("upd", "5"), EXECUTE, Messages.SYNC);
        assertThat(s.texts(unit)).containsExactly("UPDATE t SET v = v + 1 WHERE id = $1");
        // with bound values the classifier sees the row
        assertThat(s.texts(unit, true)).containsExactly("UPDATE t SET v = v + 1 WHERE id = '5'");
        // a statement parsed in the same request wins over the registry's
        assertThat(s.texts(List.of(parse("upd", "DELETE FROM u"), bind("upd"), EXECUTE, Messages.SYNC))).containsExactly("DELETE FROM u");
        assertThat(s.texts(List.of(WireMessage.query("SELECT 1")))).containsExactly("SELECT 1");
        // an Execute of a portal bound by an earlier request: every table
        assertThat(s.texts(List.of(EXECUTE, Messages.SYNC))).containsExactly("/* unknown portal */ LOCK ALL");
    }

    @Test void aRequestCarriesTheParsesItUsesButDoesNotDefine() {
        NamedStatements s = new NamedStatements();
        WireMessage p = parse("ins", "INSERT INTO t VALUES ($1)", 23);
        s.note(List.of(p, Messages.SYNC));
        List<WireMessage> unit = List.of(bind("ins", "1"), EXECUTE, Messages.SYNC);
        assertThat(s.selfContained(unit, new HashSet<>())).containsExactly(p, unit.get(0), EXECUTE, Messages.SYNC);
        // once per log: a name already defined earlier in it is not carried again
        Set<String> defined = new HashSet<>(Set.of("ins"));
        assertThat(s.selfContained(unit, defined)).isEqualTo(unit);
        // the unnamed statement is never carried
        assertThat(s.selfContained(List.of(bind(""), EXECUTE, Messages.SYNC), new HashSet<>())).hasSize(3);
    }

    @Test void closeAndDiscardAllForgetStatementsAndTheirBytes() {
        NamedStatements s = new NamedStatements();
        WireMessage a = parse("a", "SELECT 1"), b = parse("b", "SELECT 22");
        s.note(List.of(a, b, Messages.SYNC));
        assertThat(s.bytes()).isEqualTo(2L * (a.payload().length + b.payload().length));
        s.note(List.of(parse("a", "SELECT 333")));   // replaced: counted once, at its new size
        assertThat(s.bytes()).isEqualTo(2L * (parse("a", "SELECT 333").payload().length + b.payload().length));
        s.note(List.of(Messages.closeStatement("b"), Messages.SYNC));
        assertThat(s.bytes()).isEqualTo(2L * parse("a", "SELECT 333").payload().length);
        assertThat(s.selfContained(List.of(bind("b"), EXECUTE), new HashSet<>())).hasSize(2);
        s.note(List.of(WireMessage.query("DISCARD ALL")));
        assertThat(s.bytes()).isZero();
        assertThat(s.selfContained(List.of(bind("a"), EXECUTE), new HashSet<>())).hasSize(2);
    }

    @Test void ownCommandsThroughTheExtendedProtocol() {
        List<WireMessage> unit = List.of(parse("", "SHOW wanrep.sites"), bind(""),
                new PayloadWriter().int8('P').cstring("").message('D'), EXECUTE, Messages.SYNC);
        assertThat(OwnCommands.extendedCommand(unit)).isEqualTo("SHOW wanrep.sites");
        // a named statement, or anything but the plain sequence, is PostgreSQL's to answer
        assertThat(OwnCommands.extendedCommand(List.of(parse("n", "SHOW wanrep.sites"), Messages.SYNC))).isNull();
        assertThat(OwnCommands.extendedCommand(List.of(parse("", "SELECT 1"), Messages.SYNC))).isNull();
        OwnCommands.Answer a = new OwnCommands.Answer("SHOW", List.of("site"), List.of(List.of("a"), List.of("b")));
        assertThat(OwnCommands.extendedReplies(unit, a, 'I')).extracting(WireMessage::kind).containsExactly('1', '2', 'T', 'D', 'D', 'C', 'Z');
        assertThat(OwnCommands.queryReplies(a, 'T')).extracting(WireMessage::kind).containsExactly('T', 'D', 'D', 'C', 'Z');
        assertThat(OwnCommands.queryReplies(new OwnCommands.Answer("RESET", null, List.of()), 'I')).extracting(WireMessage::kind)
                .containsExactly('C', 'Z');
    }
}
