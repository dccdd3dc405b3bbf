package org.wanrep.emulator.dbt1;

import java.util.List;
import java.util.Locale;

/**
 * The size of a DBT-1 database, from the TPC-W scale rules: items in {1k, 10k, 100k, 1M, 10M};
 * customers = 2880 x emulated browsers; addresses = 2 x customers; authors = items / 4;
 * orders = 0.9 x customers (1 to 5 lines each); 92 countries.
 */
public record Scale(int items, int ebs) {
    public static final List<Integer> ITEM_COUNTS = List.of(1_000, 10_000, 100_000, 1_000_000, 10_000_000);
    public static final int COUNTRIES = 92;

    public Scale {
        if (!ITEM_COUNTS.contains(items))
            throw new IllegalArgumentException("dbt1: items must be one of 1k, 10k, 100k, 1M, 10M, got " + items);
        // 2880 x ebs customers and twice as many addresses must fit an int
        if (ebs < 1 || ebs > 100_000) throw new IllegalArgumentException("dbt1: emulated browsers must be 1..100000, got " + ebs);
    }

    public int customers() { return 2880 * ebs; }
    public int addresses() { return 2 * customers(); }
    public int authors() { return items / 4; }
    /** 0.9 x customers, exactly (2880 x 0.9 = 2592). */
    public int orders() { return 2592 * ebs; }

    /** {@code 1k}, {@code 10K}, {@code 1M}, {@code 100000}... as an item count. */
    public static int parseItems(String s) {
        String t = s.trim().toLowerCase(Locale.ROOT).replace("_", "");
        long mult = 1;
        if (t.endsWith("k")) { mult = 1_000; t = t.substring(0, t.length() - 1); }
        else if (t.endsWith("m")) { mult = 1_000_000; t = t.substring(0, t.length() - 1); }
        try {
            return Math.toIntExact(Long.parseLong(t) * mult);
        } catch (NumberFormatException | ArithmeticException e) {
            throw new IllegalArgumentException("dbt1: items must be one of 1k, 10k, 100k, 1M, 10M, got '" + s + "'");
        }
    }
}
