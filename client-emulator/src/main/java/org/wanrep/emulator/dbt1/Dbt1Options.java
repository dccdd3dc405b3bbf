package org.wanrep.emulator.dbt1;

import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Options of the DBT-1 workload: {@code items} (1k, 10k, 100k, 1M, 10M; default 1k so tests and
 * quick runs load in seconds), {@code ebs} (emulated browsers, default 10), {@code mix} (browsing,
 * shopping, ordering; default shopping, TPC-W's primary mix) and {@code think} (on/off, default on).
 */
public record Dbt1Options(Scale scale, Mix mix, boolean thinkTime) {
    public static final Set<String> KEYS = Set.of("items", "ebs", "mix", "think");

    public static Dbt1Options defaults() { return new Dbt1Options(new Scale(1_000, 10), Mix.SHOPPING, true); }

    /** Parses {@code key=value} options; unknown keys and bad values fail with a message naming them. */
    public static Dbt1Options parse(Map<String, String> options) {
        for (String k : options.keySet())
            if (!KEYS.contains(k)) throw new IllegalArgumentException("dbt1: unknown option '" + k + "', expected one of " + KEYS);
        Dbt1Options d = defaults();
        int items = options.containsKey("items") ? Scale.parseItems(options.get("items")) : d.scale().items();
        int ebs = d.scale().ebs();
        if (options.containsKey("ebs")) {
            try {
                ebs = Integer.parseInt(options.get("ebs").trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("dbt1: ebs must be a number, got '" + options.get("ebs") + "'");
            }
        }
        Mix mix = options.containsKey("mix") ? Mix.parse(options.get("mix")) : d.mix();
        boolean think = d.thinkTime();
        if (options.containsKey("think")) {
            think = switch (options.get("think").trim().toLowerCase(Locale.ROOT)) {
                case "on", "true", "yes" -> true;
                case "off", "false", "no" -> false;
                default -> throw new IllegalArgumentException("dbt1: think must be on or off, got '" + options.get("think") + "'");
            };
        }
        return new Dbt1Options(new Scale(items, ebs), mix, think);
    }
}
