package org.wanrep.frontend;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.wanrep.cluster.ClusterLayout;
import org.wanrep.cluster.LocalCluster;
import org.wanrep.config.Config;
import org.wanrep.tls.Certificates;
import org.wanrep.tls.TlsContext;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPair;
import java.security.cert.X509Certificate;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * TLS between clients and the proxy, on a cluster made by `cluster up` (real processes, its own CA in
 * DIR/tls). Site 1 requires TLS and a client certificate from that CA naming the user; site 2 offers
 * TLS and takes plain connections too.
 */
class TlsClientsTest {
    static Path dir;
    static ClusterLayout layout;
    static ClusterLayout.SiteEntry strict, open;
    static Path clientCert, clientKey, otherCert, otherKey;
    static final PrintStream QUIET = new PrintStream(java.io.OutputStream.nullOutputStream());

    @BeforeAll
    static void up() throws Exception {
        // readable by the postgres user, which initdb runs as when the tests run as root
        dir = Files.createTempDirectory("wanrep-tls", PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
        Config base = Config.build(Map.of("site.site1.proxy.tls.require", "on", "site.site1.proxy.tls.ca", dir.resolve("tls/ca.crt").toString(),
                "site.site1.proxy.tls.clientcert", "verify-full"), List.of());
        layout = LocalCluster.up(dir, 2, "none", base, QUIET);
        strict = layout.sites().get(0);
        open = layout.sites().get(1);
        // a client certificate for user postgres, signed by the cluster's CA (pgjdbc reads a DER PKCS#8 key)
        X509Certificate caCert = TlsContext.readCertificates(dir.resolve("tls/ca.crt")).get(0);
        var ca = new Certificates.Issued(caCert, new KeyPair(caCert.getPublicKey(), TlsContext.readKey(dir.resolve("tls/ca.key"))));
        var client = Certificates.issue(ca, "postgres", List.of(), false, Duration.ofDays(1));
        clientCert = dir.resolve("client.crt");
        clientKey = dir.resolve("client.pk8");
        Certificates.writeCertificate(clientCert, client.certificate());
        Certificates.writeOwnerOnly(clientKey, client.keys().getPrivate().getEncoded());
        var other = Certificates.issue(ca, "mallory", List.of(), false, Duration.ofDays(1));
        otherCert = dir.resolve("other.crt");
        otherKey = dir.resolve("other.pk8");
        Certificates.writeCertificate(otherCert, other.certificate());
        Certificates.writeOwnerOnly(otherKey, other.keys().getPrivate().getEncoded());
        try (Connection c = connect(open, "sslmode=verify-full"); Statement st = c.createStatement()) {
            st.execute("CREATE TABLE t (id int PRIMARY KEY, v int)");
            st.execute("INSERT INTO t VALUES (1, 0), (2, 0)");
        }
    }

    @AfterAll
    static void down() throws Exception {
        if (layout != null) LocalCluster.down(dir, QUIET);
        try (var files = Files.walk(dir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    static Connection connect(ClusterLayout.SiteEntry e, String params) throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", "postgres");
        p.setProperty("connectTimeout", "10");
        p.setProperty("socketTimeout", "30");
        p.setProperty("sslrootcert", dir.resolve("tls/ca.crt").toString());
        return DriverManager.getConnection("jdbc:postgresql://localhost:" + e.proxy_port() + "/postgres?" + params, p);
    }

    /** The row's value at a replica once it equals {@code expected} (the other site commits a little after the origin), or after 10 s. */
    static int awaitValue(ClusterLayout.SiteEntry e, int id, int expected) throws Exception {
        long end = System.nanoTime() + 10_000_000_000L;
        int v;
        while ((v = valueAtReplica(e, id)) != expected && System.nanoTime() < end) Thread.sleep(20);
        return v;
    }

    static int valueAtReplica(ClusterLayout.SiteEntry e, int id) throws Exception {
        Properties p = new Properties();
        p.setProperty("user", "postgres");
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + e.pg_port() + "/postgres", p);
             Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT v FROM t WHERE id = " + id)) {
            rs.next();
            return rs.getInt(1);
        }
    }

    static ClientTools.Result psql(String conninfo, String script) throws Exception {
        return ClientTools.run(List.of(ClientTools.bin("psql").toString(), "-X", "-v", "ON_ERROR_STOP=1", "-d", conninfo, "-f", "-"), script, 60);
    }

    @Test
    void pgjdbcVerifyFullUpdateReplicates() throws Exception {
        try (Connection c = connect(open, "ssl=true&sslmode=verify-full"); Statement st = c.createStatement()) {
            assertThat(st.executeUpdate("UPDATE t SET v = 7 WHERE id = 1")).isEqualTo(1);
        }
        assertThat(awaitValue(strict, 1, 7)).isEqualTo(7);
        // and read back at the strict site with the client certificate
        try (Connection c = connect(strict, "sslmode=verify-full&sslcert=" + clientCert + "&sslkey=" + clientKey);
             Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT v FROM t WHERE id = 1")) {
            rs.next();
            assertThat(rs.getInt(1)).isEqualTo(7);
        }
    }

    @Test
    void psqlVerifyFullUpdateReplicates() throws Exception {
        var r = psql("sslmode=verify-full sslrootcert=" + dir.resolve("tls/ca.crt") + " host=localhost port=" + open.proxy_port() + " user=postgres dbname=postgres",
                "\\conninfo\nUPDATE t SET v = 5 WHERE id = 2;\n");
        assertThat(r.exit()).as(r.output()).isZero();
        assertThat(r.output()).contains("SSL connection (protocol: TLSv1.3").contains("UPDATE 1");
        assertThat(awaitValue(strict, 2, 5)).isEqualTo(5);
        assertThat(valueAtReplica(open, 2)).isEqualTo(5);
    }

    @Test
    void plainConnectionsAreRefusedWhereTlsIsRequired() throws Exception {
        assertThatThrownBy(() -> connect(strict, "sslmode=disable").close())
                .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("28000"))
                .hasMessageContaining("no encryption");
        var r = psql("sslmode=disable host=127.0.0.1 port=" + strict.proxy_port() + " user=postgres dbname=postgres", "SELECT 1;\n");
        assertThat(r.exit()).isNotZero();
        assertThat(r.output()).contains("no pg_hba.conf entry").contains("no encryption");
        // TLS without a client certificate is refused too: site 1 asks for one from the cluster's CA
        // (the same connection with the certificate gets in, see the other tests; TLS 1.3 reports the refusal after the
        // client's side of the handshake, so the client sees the alert or a broken pipe)
        assertThatThrownBy(() -> connect(strict, "sslmode=verify-full").close())
                .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).startsWith("08"));
        // a certificate from the right CA that names another user: PostgreSQL's clientcert=verify-full refusal
        assertThatThrownBy(() -> connect(strict, "sslmode=verify-full&sslcert=" + otherCert + "&sslkey=" + otherKey).close())
                .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("28000"))
                .hasMessageContaining("CN mismatch");
        // where TLS is offered but not required, plain connections still work
        try (Connection c = connect(open, "sslmode=disable"); Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT count(*) FROM t")) {
            rs.next();
            assertThat(rs.getInt(1)).isEqualTo(2);
        }
    }

    @Test
    void cancelReachesATlsSession() throws Exception {
        // pgjdbc sends the CancelRequest on a new plain connection: taken even where TLS is required, as PostgreSQL does
        // (cancelled once the sleep runs at the replica: a cancel that arrives before a request reaches its backend
        // finds nothing to cancel, as with PostgreSQL itself, and on a loaded machine a fixed timeout can come first)
        try (Connection c = connect(strict, "sslmode=verify-full&sslcert=" + clientCert + "&sslkey=" + clientKey); Statement st = c.createStatement()) {
            long t0 = System.nanoTime();
            var sleeping = java.util.concurrent.CompletableFuture.runAsync(() -> {
                try { st.execute("SELECT pg_sleep(60) /* tls-cancel */"); } catch (SQLException e) { throw new java.util.concurrent.CompletionException(e); }
            });
            try (Connection watch = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + strict.pg_port() + "/postgres", "postgres", "")) {
                for (int i = 0; i < 300; i++) {
                    try (ResultSet rs = watch.createStatement().executeQuery(
                            "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%tls-cancel%' AND state = 'active' AND pid <> pg_backend_pid()")) {
                        rs.next();
                        if (rs.getInt(1) > 0) break;
                    }
                    Thread.sleep(100);
                }
            }
            st.cancel();
            assertThatThrownBy(sleeping::join).hasCauseInstanceOf(SQLException.class)
                    .satisfies(e -> assertThat(((SQLException) e.getCause()).getSQLState()).isEqualTo("57014"));
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(50));
        }
    }

    @Test
    void generatedSecretsAreTheOwnersOnly() throws Exception {
        for (Path p : List.of(dir.resolve("wanrep.properties"), dir.resolve("tls/server.key"), dir.resolve("tls/ca.key")))
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(p))).as(p.toString()).isEqualTo("rw-------");
        assertThat(Files.readString(dir.resolve("wanrep.properties"))).contains("proxy.tls.cert=");
    }
}
