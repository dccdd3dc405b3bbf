package org.wanrep.wire;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Reading client messages: malformed input is a protocol violation (08P01), never an internal error. */
class MessagesTest {
    private static WireMessage msg(char type, byte... payload) { return WireMessage.of(type, payload); }

    @Test
    void closeAndDescribeTargets() {
        assertThat(Messages.closeTarget(Messages.closeStatement("s1"))).isEqualTo(new Messages.Target('S', "s1"));
        assertThat(Messages.closeTarget(new PayloadWriter().int8('P').cstring("").message('C'))).isEqualTo(new Messages.Target('P', ""));
        Messages.Target d = Messages.describeTarget(new PayloadWriter().int8('S').cstring("q").message('D'));
        assertThat(d.isStatement()).isTrue();
        assertThat(d.name()).isEqualTo("q");
    }

    @Test
    void emptyOrTruncatedCloseIsAProtocolViolation() {
        assertThatThrownBy(() -> Messages.closeTarget(msg('C'))).isInstanceOf(ProtocolException.class).hasMessageContaining("invalid Close message");
        assertThatThrownBy(() -> Messages.closeTarget(msg('C', (byte) 'S'))).isInstanceOf(ProtocolException.class).hasMessageContaining("invalid Close message");
        assertThatThrownBy(() -> Messages.closeTarget(msg('C', (byte) 'S', (byte) 'a'))).isInstanceOf(ProtocolException.class);
        assertThatThrownBy(() -> Messages.closeTarget(msg('C', (byte) 'X', (byte) 0))).isInstanceOf(ProtocolException.class).hasMessageContaining("subtype");
        assertThatThrownBy(() -> Messages.closeTarget(msg('C', (byte) 'S', (byte) 0, (byte) 'x'))).isInstanceOf(ProtocolException.class);
    }

    @Test
    void emptyOrTruncatedDescribeIsAProtocolViolation() {
        assertThatThrownBy(() -> Messages.describeTarget(msg('D'))).isInstanceOf(ProtocolException.class).hasMessageContaining("invalid Describe message");
        assertThatThrownBy(() -> Messages.describeTarget(msg('D', (byte) 'P', (byte) 'n'))).isInstanceOf(ProtocolException.class);
    }

    @Test
    void truncatedPayloadsThrowProtocolExceptions() {
        assertThatThrownBy(() -> new PayloadReader(new byte[0]).int8()).isInstanceOf(ProtocolException.class);
        assertThatThrownBy(() -> new PayloadReader(new byte[1]).int16()).isInstanceOf(ProtocolException.class);
        assertThatThrownBy(() -> new PayloadReader(new byte[3]).int32()).isInstanceOf(ProtocolException.class);
        assertThatThrownBy(() -> new PayloadReader(new byte[]{'a'}).cstring()).isInstanceOf(ProtocolException.class);
        assertThatThrownBy(() -> new PayloadReader(new byte[2]).bytes(3)).isInstanceOf(ProtocolException.class);
        assertThatThrownBy(() -> new PayloadReader(new byte[2]).bytes(-1)).isInstanceOf(ProtocolException.class);
        // a DataRow claiming more bytes than it has
        assertThatThrownBy(() -> Messages.dataRowValues(new PayloadWriter().int16(1).int32(10).bytes(new byte[]{1}).message('D')))
                .isInstanceOf(ProtocolException.class);
        assertThatThrownBy(() -> Messages.parseQuery(new PayloadWriter().cstring("").message('P'))).isInstanceOf(ProtocolException.class);
        assertThatThrownBy(() -> Messages.bindNames(msg('B'))).isInstanceOf(ProtocolException.class);
        assertThatThrownBy(() -> Messages.status(msg('Z'))).isInstanceOf(ProtocolException.class);
    }
}
