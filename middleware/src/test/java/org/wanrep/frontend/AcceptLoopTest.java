package org.wanrep.frontend;

import org.junit.jupiter.api.Test;
import org.wanrep.auth.UserDirectory;
import org.wanrep.backend.BackendTarget;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 15: an OutOfMemoryError while serving one connection killed a site's accept thread, and the
 * site never accepted again while it still said it was up. A failure to serve one connection must
 * drop that client only; an accept thread that ends anyway must stop the site. No replica is needed:
 * a served client is told that the (absent) replica cannot be reached.
 */
class AcceptLoopTest {
    private static ProxyServer proxy() throws Exception {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0)) { closedPort = s.getLocalPort(); }
        SiteContext ctx = new SiteContext("t", new BackendTarget("127.0.0.1", closedPort, "postgres", ""), UserDirectory.parse("postgres:trust"),
                null, null, new CancelRegistry(), false, Duration.ofSeconds(1), null, new SessionLimit(10), false, ClientLimits.defaults(), null);
        return new ProxyServer(ctx, "127.0.0.1", 0);
    }

    /** Connects and sends a startup packet; returns the first message type the proxy answers. */
    private static char firstAnswer(int port) throws Exception {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(10_000);
            byte[] body = "\0\3\0\0user\0postgres\0\0".getBytes(StandardCharsets.US_ASCII);
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            out.writeInt(body.length + 4);
            out.write(body);
            out.flush();
            return (char) new DataInputStream(s.getInputStream()).readByte();
        }
    }

    @Test
    void aConnectionThatCannotBeServedDoesNotStopTheAcceptThread() throws Exception {
        try (ProxyServer p = proxy()) {
            AtomicInteger n = new AtomicInteger();
            p.beforeServe = s -> {
                if (n.incrementAndGet() <= 2) throw new OutOfMemoryError("unable to create native thread (test)");
            };
            for (int i = 0; i < 2; i++) {
                try {
                    firstAnswer(p.port());
                } catch (java.io.IOException expected) {
                    // that client is dropped
                }
            }
            assertThat(firstAnswer(p.port())).as("the next client is served").isEqualTo('E');
            assertThat(p.accepting()).isTrue();
        }
    }

    @Test
    void anAcceptThreadThatDiesStopsTheSite() throws Exception {
        try (ProxyServer p = proxy()) {
            CompletableFuture<String> stopped = new CompletableFuture<>();
            p.onFatal(stopped::complete);
            p.beforeServe = s -> { throw new AssertionError("a defect in the accept loop (test)"); };
            try {
                firstAnswer(p.port());
            } catch (java.io.IOException expected) {
                // no answer
            }
            assertThat(stopped.get(10, TimeUnit.SECONDS)).contains("stopped accepting clients");
        }
    }
}
