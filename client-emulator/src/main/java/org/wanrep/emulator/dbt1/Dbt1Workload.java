package org.wanrep.emulator.dbt1;

import org.wanrep.emulator.workload.Transaction;
import org.wanrep.emulator.workload.Workload;

import java.io.PrintStream;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.WeakHashMap;

/**
 * OSDL-DBT-1, the TPC-W workload for PostgreSQL: an online bookstore whose 14 interactions are
 * PL/pgSQL functions, each called as one {@code SELECT * FROM fn(...)} in autocommit, so the
 * writes hide inside SELECTs and the middleware learns each function's tables from
 * {@link #middlewareSettings()}.
 * <p>
 * A client is an emulated browser: its random source identifies it, and its session (customer,
 * cart) lives as long as that source (see {@link EmulatedBrowser}). Safe for concurrent clients.
 */
public final class Dbt1Workload implements Workload {
    private final Dbt1Options options;
    private final Map<Random, EmulatedBrowser> browsers = Collections.synchronizedMap(new WeakHashMap<>());

    public Dbt1Workload(Dbt1Options options) { this.options = options; }

    public Dbt1Workload() { this(Dbt1Options.defaults()); }

    public Dbt1Options options() { return options; }

    @Override public String name() { return "dbt1"; }

    @Override public void load(Connection c, PrintStream progress) throws SQLException {
        new Dbt1Loader(options.scale()).load(c, progress);
    }

    /** {@code functions.NAME.reads} / {@code .writes} for every interaction, both always present. */
    @Override public Map<String, String> middlewareSettings() {
        Map<String, String> m = new LinkedHashMap<>();
        for (Interaction i : Interaction.values()) {
            m.put("functions." + i.function() + ".reads", Interaction.qualified(i.reads()));
            m.put("functions." + i.function() + ".writes", Interaction.qualified(i.writes()));
        }
        return m;
    }

    @Override public List<String> types() {
        return Arrays.stream(Interaction.values()).map(Interaction::type).toList();
    }

    @Override public Transaction next(Random r) {
        EmulatedBrowser b = browsers.computeIfAbsent(r, k -> new EmulatedBrowser(options.scale(), k));
        synchronized (b) {
            return b.next(options.mix().draw(r), r);
        }
    }

    @Override public Duration thinkTime(Random r) {
        return options.thinkTime() ? ThinkTime.draw(r) : Duration.ZERO;
    }

    @Override public String toString() {
        return String.format(Locale.ROOT, "dbt1 (%s mix, %,d items, %d EBs, %,d customers%s)", options.mix().name().toLowerCase(Locale.ROOT),
                options.scale().items(), options.scale().ebs(), options.scale().customers(), options.thinkTime() ? "" : ", no think time");
    }
}
