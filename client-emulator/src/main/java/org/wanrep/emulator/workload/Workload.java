package org.wanrep.emulator.workload;

import java.io.PrintStream;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;

/**
 * A benchmark workload: its schema and data, the transactions clients submit, and what the
 * middleware must be told to classify them (table sets of stored functions, say).
 */
public interface Workload {
    /** Short name used on the command line and in results ({@code synthetic}, {@code dbt1}). */
    String name();

    /**
     * Creates the schema and loads the data through {@code c}. Loading through a proxy replicates
     * it to every site; loading each replica directly is the caller's choice.
     */
    void load(Connection c, PrintStream progress) throws SQLException;

    /**
     * Middleware settings this workload needs, e.g. {@code functions.NAME.reads}/{@code .writes}
     * for stored functions whose bodies hide their writes. Merged into the cluster configuration.
     */
    default Map<String, String> middlewareSettings() { return Map.of(); }

    /**
     * pgjdbc connection properties its transactions need on every client connection, e.g.
     * {@code preferQueryMode=simple} so that a multi-statement string travels as one simple Query.
     */
    default Properties connectionProperties() { return new Properties(); }

    /** The transaction types this workload can produce, in a stable order (for reports). */
    List<String> types();

    /**
     * The workload as the emulator of site {@code site} runs it: the same one by default; a workload
     * whose transactions or their labels depend on where they are submitted (the synthetic
     * workload's local and remote writes under primary copy) returns a copy bound to that site.
     * Every site's copy must have the same {@link #types()}.
     */
    default Workload forSite(String site) { return this; }

    /**
     * The next transaction a client submits, drawn from its seeded random source. {@code r} belongs
     * to one client and is the same instance for that client's whole life, also in
     * {@link #thinkTime}: in a closed loop one per client, in an open loop one per emulator (its
     * schedule is one client that does not wait for answers). A workload may therefore keep
     * per-client state keyed on the instance (DBT-1 keeps an emulated browser's session, its cart,
     * that way). The emulator never calls this concurrently on one instance.
     */
    Transaction next(Random r);

    /**
     * A client's think time before its next transaction in closed-loop runs (DBT-1: negative
     * exponential, mean 7.2 s, capped at 10x). Open-loop runs at a target rate ignore it.
     */
    default Duration thinkTime(Random r) { return Duration.ZERO; }
}
