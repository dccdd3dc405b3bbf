package org.wanrep.frontend;

import org.junit.jupiter.api.Test;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.ByteArrayOutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** A malformed message is a protocol violation (08P01, as PostgreSQL answers), never an internal error (XX000). */
class MalformedMessagesTest {
    @Test
    void anEmptyCloseIsAProtocolViolation() throws Exception {
        try (TestCluster c = new TestCluster(List.of("a"), "none", Map.of("delivery", "safe"));
             Socket s = new Socket("127.0.0.1", c.proxyPort(0))) {
            s.setSoTimeout(10_000);
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            DataInputStream in = new DataInputStream(s.getInputStream());
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            DataOutputStream b = new DataOutputStream(body);
            b.writeInt(196608);
            b.write("user\0postgres\0database\0postgres\0\0".getBytes(StandardCharsets.US_ASCII));
            out.writeInt(body.size() + 4);
            out.write(body.toByteArray());
            out.flush();
            while (true) {   // up to ReadyForQuery
                char k = (char) in.readByte();
                byte[] p = new byte[in.readInt() - 4];
                in.readFully(p);
                if (k == 'Z') break;
            }
            out.writeByte('C');   // Close with no target at all
            out.writeInt(4);
            out.writeByte('S');   // Sync
            out.writeInt(4);
            out.flush();
            char k = (char) in.readByte();
            byte[] p = new byte[in.readInt() - 4];
            in.readFully(p);
            assertThat(k).isEqualTo('E');
            String fields = new String(p, StandardCharsets.UTF_8);
            assertThat(fields).contains("C08P01").doesNotContain("XX000").doesNotContain("ArrayIndexOutOfBounds");
        }
    }
}
