package org.wanrep.cluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;

/** What the tests of clusters of real processes share: their directory, pgjdbc connections, signals to a process. */
final class ClusterProcesses {
    private ClusterProcesses() {}

    /** A directory for `cluster up`, readable by user postgres (PostgreSQL runs as postgres when the tests run as root). */
    static Path directory(String prefix) throws IOException {
        return Files.createTempDirectory(prefix,
                java.nio.file.attribute.PosixFilePermissions.asFileAttribute(java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x")));
    }

    /** pgjdbc settings: plain TCP, bounded waits (a paused or killed site must not hang the test). */
    static Properties props() {
        Properties p = new Properties();
        p.setProperty("user", "postgres");
        p.setProperty("sslmode", "disable");
        p.setProperty("connectTimeout", "5");
        p.setProperty("socketTimeout", "30");
        return p;
    }

    static Connection connect(int port) throws SQLException {
        return DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + port + "/postgres", props());
    }

    /** The pid of the postmaster serving a site's replica (first line of its postmaster.pid). */
    static long postmasterPid(ClusterLayout.SiteEntry e) throws IOException {
        long pid = org.wanrep.pg.LocalPostgres.postmasterPid(Path.of(e.data_dir()));
        if (pid <= 0) throw new IOException("no postmaster.pid in " + e.data_dir());
        return pid;
    }

    /** kill -SIG pid (STOP, CONT, KILL). */
    static void signal(String sig, long pid) throws Exception {
        Process p = new ProcessBuilder("kill", "-" + sig, Long.toString(pid)).inheritIO().start();
        assertThat(p.waitFor()).isZero();
    }
}
