package org.wanrep.backend;

/**
 * Where and as whom the proxy reaches its replica. With {@code socketDir} (PostgreSQL's
 * {@code unix_socket_directories} on the same host) the proxy's own protocol connections use the
 * Unix-domain socket {@code socketDir/.s.PGSQL.port}, which costs the kernel much less per message
 * than TCP on loopback; JDBC connections (capture, apply, catalog) still use host and port.
 */
public record BackendTarget(String host, int port, String user, String password, String socketDir, String sslmode, String sslrootcert) {
    public BackendTarget(String host, int port, String user, String password) { this(host, port, user, password, null); }

    public BackendTarget(String host, int port, String user, String password, String socketDir) {
        this(host, port, user, password, socketDir, "disable", null);
    }

    /**
     * {@code sslmode} (libpq's disable, require, verify-ca, verify-full) and {@code sslrootcert} apply
     * to TCP connections, the proxy's own and pgjdbc's (a remote replica); a Unix-domain socket is local.
     */
    public BackendTarget {
        if (socketDir != null && socketDir.isBlank()) socketDir = null;
        if (sslmode == null || sslmode.isBlank()) sslmode = "disable";
        if (sslrootcert != null && sslrootcert.isBlank()) sslrootcert = null;
    }

    /** The same replica, logging in as {@code user} (with {@code password}, null or empty: none). */
    public BackendTarget as(String user, String password) {
        return new BackendTarget(host, port, user, password == null ? "" : password, socketDir, sslmode, sslrootcert);
    }

    /** pgjdbc's URL for {@code database} at this replica, with its sslmode. */
    public String jdbcUrl(String database) {
        java.nio.charset.Charset u = java.nio.charset.StandardCharsets.UTF_8;
        String url = "jdbc:postgresql://" + host + ":" + port + "/" + java.net.URLEncoder.encode(database, u) + "?sslmode=" + sslmode;
        return sslrootcert == null ? url : url + "&sslrootcert=" + java.net.URLEncoder.encode(sslrootcert, u);
    }

    /** A pgjdbc connection to {@code database} at this replica, as this target's user, with its sslmode. */
    public java.sql.Connection jdbc(String database, String applicationName) throws java.sql.SQLException {
        java.util.Properties p = new java.util.Properties();
        p.setProperty("user", user);
        if (!password.isEmpty()) p.setProperty("password", password);
        if (applicationName != null) p.setProperty("ApplicationName", applicationName);
        return java.sql.DriverManager.getConnection(jdbcUrl(database), p);
    }

    /** The Unix-domain socket file, or null for TCP. */
    public java.nio.file.Path socketFile() {
        return socketDir == null ? null : java.nio.file.Path.of(socketDir, ".s.PGSQL." + port);
    }

    @Override public String toString() { return user + "@" + (socketDir != null ? socketDir + " (port " + port + ")" : host + ":" + port); }
}
