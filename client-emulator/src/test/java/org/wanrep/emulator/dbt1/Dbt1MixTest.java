package org.wanrep.emulator.dbt1;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

/** The client side without a database: mixes, think time, options, settings. */
class Dbt1MixTest {
    private static final long SEED = Long.getLong("dbt1.seed", System.nanoTime());

    /** FACTS.md, OSDL-DBT-1: percent per interaction in Interaction order. */
    private static final Map<Mix, double[]> FACTS = Map.of(
            Mix.BROWSING, new double[]{29, 11, 11, 21, 12, 11, 2, 0.82, 0.75, 0.69, 0.30, 0.25, 0.10, 0.09},
            Mix.SHOPPING, new double[]{16, 5, 5, 17, 20, 17, 11.6, 3, 2.6, 1.2, 0.75, 0.66, 0.10, 0.09},
            Mix.ORDERING, new double[]{9.13, 0.46, 0.46, 12.35, 14.53, 13.08, 13.53, 12.86, 12.73, 10.18, 0.25, 0.22, 0.12, 0.11});

    @Test
    void drawnFrequenciesMatchTheTpcwMixes() {
        System.out.println("Dbt1MixTest seed " + SEED + " (rerun with -Ddbt1.seed=" + SEED + ")");
        int n = 200_000;
        for (Mix mix : Mix.values()) {
            Dbt1Workload w = new Dbt1Workload(new Dbt1Options(new Scale(1_000, 1), mix, false));
            Random r = new Random(SEED ^ mix.ordinal());
            Map<String, Integer> counts = new HashMap<>();
            for (int k = 0; k < n; k++) counts.merge(w.next(r).type(), 1, Integer::sum);
            double[] facts = FACTS.get(mix);
            for (Interaction i : Interaction.values()) {
                double expected = facts[i.ordinal()] / 100;
                double observed = counts.getOrDefault(i.type(), 0) / (double) n;
                double sigma = Math.sqrt(expected * (1 - expected) / n);
                // the percentages are rounded to 0.01 (ordering sums to 100.01): allow that plus 5 sigma
                assertThat(observed).as("%s %s", mix, i).isCloseTo(expected, within(5 * sigma + 0.0002));
            }
        }
    }

    @Test
    void thinkTimeIsNegativeExponentialWithMean7point2sCappedAt72s() {
        Random r = new Random(SEED);
        int n = 200_000;
        double sum = 0, max = 0;
        int aboveMean = 0;
        for (int k = 0; k < n; k++) {
            double s = ThinkTime.draw(r).toNanos() / 1e9;
            sum += s;
            max = Math.max(max, s);
            if (s > 7.2) aboveMean++;
        }
        assertThat(sum / n).isCloseTo(7.2, within(0.1));
        assertThat(max).isLessThanOrEqualTo(72.0);
        // exponential: P(X > mean) = 1/e
        assertThat(aboveMean / (double) n).isCloseTo(Math.exp(-1), within(0.01));
        Dbt1Workload noThink = new Dbt1Workload(new Dbt1Options(new Scale(1_000, 1), Mix.SHOPPING, false));
        assertThat(noThink.thinkTime(r)).isEqualTo(Duration.ZERO);
    }

    @Test
    void optionsFollowTheScaleRules() {
        Dbt1Options o = Dbt1Options.parse(Map.of("items", "100k", "ebs", "3", "mix", "ordering", "think", "off"));
        assertThat(o.scale().items()).isEqualTo(100_000);
        assertThat(o.scale().customers()).isEqualTo(3 * 2880);
        assertThat(o.scale().addresses()).isEqualTo(2 * 3 * 2880);
        assertThat(o.scale().authors()).isEqualTo(25_000);
        assertThat(o.scale().orders()).isEqualTo((int) Math.round(0.9 * 3 * 2880));
        assertThat(o.mix()).isEqualTo(Mix.ORDERING);
        assertThat(o.thinkTime()).isFalse();
        assertThat(Dbt1Options.parse(Map.of()).scale()).isEqualTo(new Scale(1_000, 10));
        assertThat(Scale.parseItems("10M")).isEqualTo(10_000_000);
        assertThatThrownBy(() -> Dbt1Options.parse(Map.of("items", "5k"))).hasMessageContaining("1k, 10k");
        assertThatThrownBy(() -> Dbt1Options.parse(Map.of("size", "1"))).hasMessageContaining("unknown option 'size'");
        assertThatThrownBy(() -> Dbt1Options.parse(Map.of("mix", "buying"))).hasMessageContaining("browsing, shopping or ordering");
    }

    @Test
    void middlewareSettingsDeclareReadsAndWritesOfEveryFunction() {
        Map<String, String> s = new Dbt1Workload().middlewareSettings();
        assertThat(s).hasSize(2 * Interaction.values().length);
        assertThat(s).containsEntry("functions.buy_confirm.writes", "public.address,public.cc_xacts,public.item,public.order_line,public.orders")
                .containsEntry("functions.buy_confirm.reads", "public.country,public.customer,public.shopping_cart,public.shopping_cart_line")
                .containsEntry("functions.home.writes", "")
                .containsEntry("functions.customer_registration.reads", "");
        for (Interaction i : Interaction.values()) {
            assertThat(i.readOnly()).isEqualTo(s.get("functions." + i.function() + ".writes").isEmpty());
            // a table listed as read and written would only blur the declaration
            assertThat(java.util.Collections.disjoint(i.reads(), i.writes())).as(i.function()).isTrue();
        }
        assertThat(Arrays.stream(Interaction.values()).filter(i -> !i.readOnly())).containsExactly(Interaction.SHOPPING_CART, Interaction.BUY_REQUEST, Interaction.BUY_CONFIRM,
                Interaction.ADMIN_CONFIRM);
    }

    @Test
    void digSylSpellsEachDigit() {
        assertThat(DigSyl.of(0)).isEqualTo("BA");
        assertThat(DigSyl.of(1234567890)).isEqualTo("OGALRIRESEATULINNGBA");
    }
}
