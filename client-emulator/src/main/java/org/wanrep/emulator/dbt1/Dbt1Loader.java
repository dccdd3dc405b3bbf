package org.wanrep.emulator.dbt1;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * Creates the DBT-1 schema, its functions and data through one connection. Every step is one
 * request of deterministic SQL (the generator functions of load.sql), so through a proxy each
 * replica re-executes it and ends with identical tables.
 */
final class Dbt1Loader {
    private final Scale scale;

    Dbt1Loader(Scale scale) { this.scale = scale; }

    void load(Connection c, PrintStream progress) throws SQLException {
        long start = System.nanoTime();
        progress.printf("dbt1: loading %d items, %d emulated browsers (%d customers, %d orders)%n",
                scale.items(), scale.ebs(), scale.customers(), scale.orders());
        script(c, "schema.sql");
        script(c, "load.sql");
        script(c, "functions.sql");
        step(c, progress, "country", "SELECT dbt1_load_country()");
        step(c, progress, "author", "SELECT dbt1_load_author(" + scale.authors() + ")");
        step(c, progress, "item", "SELECT dbt1_load_item(" + scale.items() + ", " + scale.authors() + ")");
        step(c, progress, "address", "SELECT dbt1_load_address(" + scale.addresses() + ")");
        step(c, progress, "customer", "SELECT dbt1_load_customer(" + scale.customers() + ", " + scale.addresses() + ")");
        step(c, progress, "order_line", "SELECT dbt1_load_order_line(" + scale.orders() + ", " + scale.items() + ")");
        step(c, progress, "orders", "SELECT dbt1_load_orders(" + scale.orders() + ", " + scale.customers() + ", " + scale.addresses() + ")");
        step(c, progress, "cc_xacts", "SELECT dbt1_load_cc_xacts()");
        script(c, "indexes.sql");
        try (Statement st = c.createStatement()) {
            st.execute("ANALYZE");   // through a proxy only the local replica; statistics never change results here
        }
        progress.printf("dbt1: loaded in %.1f s%n", (System.nanoTime() - start) / 1e9);
    }

    private static void step(Connection c, PrintStream progress, String table, String sql) throws SQLException {
        long t0 = System.nanoTime();
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            progress.printf("dbt1:   %-11s %,10d rows  %6.2f s%n", table, rs.getLong(1), (System.nanoTime() - t0) / 1e9);
        }
    }

    /** Runs a resource script as one request (pgjdbc splits it, dollar quotes included). */
    private static void script(Connection c, String name) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute(resource(name));
        }
    }

    static String resource(String name) {
        try (InputStream in = Dbt1Loader.class.getResourceAsStream("/dbt1/" + name)) {
            if (in == null) throw new IllegalStateException("dbt1: resource /dbt1/" + name + " is missing");
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
