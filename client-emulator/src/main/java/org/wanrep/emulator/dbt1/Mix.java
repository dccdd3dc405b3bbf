package org.wanrep.emulator.dbt1;

import java.util.Locale;
import java.util.Random;

/**
 * The TPC-W interaction mixes (percent, in {@link Interaction} order: home, new products, best
 * sellers, product detail, search request, search results, shopping cart, customer registration,
 * buy request, buy confirm, order inquiry, order display, admin request, admin confirm).
 * Each interaction is drawn independently with these frequencies.
 */
public enum Mix {
    BROWSING(29, 11, 11, 21, 12, 11, 2, 0.82, 0.75, 0.69, 0.30, 0.25, 0.10, 0.09),
    SHOPPING(16, 5, 5, 17, 20, 17, 11.6, 3, 2.6, 1.2, 0.75, 0.66, 0.10, 0.09),
    ORDERING(9.13, 0.46, 0.46, 12.35, 14.53, 13.08, 13.53, 12.86, 12.73, 10.18, 0.25, 0.22, 0.12, 0.11);

    private final double[] percent;
    private final double[] cumulative;

    Mix(double... percent) {
        if (percent.length != Interaction.values().length) throw new IllegalStateException("a mix needs one share per interaction");
        this.percent = percent;
        this.cumulative = new double[percent.length];
        double sum = 0;
        for (int i = 0; i < percent.length; i++) cumulative[i] = sum += percent[i];
    }

    /** The share of {@code i} in percent as TPC-W lists it (the ordering mix sums to 100.01). */
    public double percent(Interaction i) { return percent[i.ordinal()]; }

    /** The share of {@code i} as drawn: its percent over the mix's total. */
    public double probability(Interaction i) { return percent[i.ordinal()] / cumulative[cumulative.length - 1]; }

    public Interaction draw(Random r) {
        double x = r.nextDouble() * cumulative[cumulative.length - 1];
        Interaction[] all = Interaction.values();
        for (int i = 0; i < cumulative.length; i++) if (x < cumulative[i]) return all[i];
        return all[all.length - 1];
    }

    public static Mix parse(String s) {
        try {
            return valueOf(s.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("dbt1: mix must be browsing, shopping or ordering, got '" + s + "'");
        }
    }
}
