package org.wanrep.backend;

/**
 * Where and as whom the proxy reaches its replica. With {@code socketDir} (PostgreSQL's
 * {@code unix_socket_directories} on the same host) the proxy's own protocol connections use the
 * Unix-domain socket {@code socketDir/.s.PGSQL.port}, which costs the kernel much less per message
 * than TCP on loopback; JDBC connections (capture, apply, catalog) still use host and port.
 */
public record BackendTarget(String host, int port, String user, String password, String socketDir) {
    public BackendTarget(String host, int port, String user, String password) { this(host, port, user, password, null); }

    public BackendTarget {
        if (socketDir != null && socketDir.isBlank()) socketDir = null;
    }

    /** The Unix-domain socket file, or null for TCP. */
    public java.nio.file.Path socketFile() {
        return socketDir == null ? null : java.nio.file.Path.of(socketDir, ".s.PGSQL." + port);
    }

    @Override public String toString() { return user + "@" + (socketDir != null ? socketDir + " (port " + port + ")" : host + ":" + port); }
}
