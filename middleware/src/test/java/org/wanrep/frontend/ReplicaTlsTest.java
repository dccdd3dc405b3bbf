package org.wanrep.frontend;

import org.junit.jupiter.api.Test;
import org.wanrep.pg.LocalPostgres;
import org.wanrep.tls.Certificates;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The proxy reaches its replica over TCP with TLS (postgres.sslmode verify-full): replicas that accept
 * TCP connections with TLS only (pg_hba hostssl), under local-copy execution so that every kind of
 * connection a site opens to its replica takes part (its own protocol connections, pgjdbc's for the
 * catalog, write-set capture and apply).
 */
class ReplicaTlsTest {
    @Test
    void sitesReachTheirReplicasOverTlsOnly() throws Exception {
        Path tls = Files.createTempDirectory("wanrep-replica-tls", PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
        var ca = Certificates.ca("replica test CA", Duration.ofDays(1));
        var server = Certificates.issue(ca, "127.0.0.1", List.of("127.0.0.1"), true, Duration.ofDays(1));
        Certificates.writeCertificate(tls.resolve("ca.crt"), ca.certificate());
        List<String> sites = List.of("a", "b");
        Map<String, String> extra = new HashMap<>(Map.of("execution", "local-copy", "postgres.sslmode", "verify-full",
                "postgres.sslrootcert", tls.resolve("ca.crt").toString()));
        for (String s : sites) extra.put("site." + s + ".postgres.socket_dir", "");   // TCP, as to a remote replica
        TestCluster.ReplicaSetup hostssl = (i, pg) -> requireTls(pg, server);
        try (TestCluster c = new TestCluster(sites, "none", extra, java.util.function.UnaryOperator.identity(), hostssl)) {
            try (Connection x = c.connect(0, "sslmode=disable"); Statement st = x.createStatement()) {
                st.execute("CREATE TABLE t (id int PRIMARY KEY, v int)");
                st.execute("INSERT INTO t VALUES (1, 1)");
            }
            try (Connection x = c.connect(1, "sslmode=disable"); Statement st = x.createStatement()) {
                assertThat(st.executeUpdate("UPDATE t SET v = v + 1 WHERE id = 1")).isEqualTo(1);
            }
            assertThat(c.check()).allSatisfy((table, verdict) -> assertThat(verdict).isEqualTo("same"));
            // the replica saw the sites' connections arrive with TLS only (pg_stat_ssl over every TCP session)
            try (Connection x = c.pgs.get(0).connect(); Statement st = x.createStatement();
                 ResultSet rs = st.executeQuery("SELECT count(*) FILTER (WHERE ssl), count(*) FILTER (WHERE NOT ssl) FROM pg_stat_ssl JOIN pg_stat_activity USING (pid) WHERE client_port IS NOT NULL AND pid <> pg_backend_pid()")) {
                rs.next();
                assertThat(rs.getInt(1)).as("TLS sessions").isGreaterThan(8);
                assertThat(rs.getInt(2)).as("plain TCP sessions").isZero();
            }
        } finally {
            Files.deleteIfExists(tls.resolve("ca.crt"));
            Files.deleteIfExists(tls);
        }
    }

    /** The replica accepts TCP connections with TLS only, with a certificate the test's CA signed. */
    private static void requireTls(LocalPostgres pg, Certificates.Issued server) throws Exception {
        Path data = pg.dataDir();
        Certificates.writeCertificate(data.resolve("server.crt"), server.certificate());
        Certificates.writeKey(data.resolve("server.key"), server.keys().getPrivate());
        var owner = Files.getOwner(data);   // postgres when the tests run as root: it must own its key
        Files.setOwner(data.resolve("server.crt"), owner);
        Files.setOwner(data.resolve("server.key"), owner);
        Path hba = data.resolve("pg_hba.conf");
        Files.writeString(hba, Files.readString(hba).replaceAll("(?m)^host(\\s)", "hostssl$1"));
        try (Connection x = pg.connect(); Statement st = x.createStatement()) {
            st.execute("ALTER SYSTEM SET ssl = on");
            st.execute("ALTER SYSTEM SET ssl_cert_file = 'server.crt'");
            st.execute("ALTER SYSTEM SET ssl_key_file = 'server.key'");
        }
        pg.stop();
        pg.start();
        try (Connection x = pg.connect(); Statement st = x.createStatement(); ResultSet rs = st.executeQuery("SHOW ssl")) {
            rs.next();
            assertThat(rs.getString(1)).isEqualTo("on");
        }
    }
}
