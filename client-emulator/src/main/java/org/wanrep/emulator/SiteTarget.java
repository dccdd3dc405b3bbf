package org.wanrep.emulator;

/** Where one emulator connects: a site's proxy (or a PostgreSQL server directly), by JDBC URL. */
public record SiteTarget(String name, String jdbcUrl) {
    public static SiteTarget of(String name, String host, int port, String database) {
        return new SiteTarget(name, "jdbc:postgresql://" + host + ":" + port + "/" + database);
    }
}
