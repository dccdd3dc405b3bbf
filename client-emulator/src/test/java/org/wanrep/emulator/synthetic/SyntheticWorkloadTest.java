package org.wanrep.emulator.synthetic;

import org.junit.jupiter.api.Test;
import org.wanrep.emulator.WorkloadOptions;
import org.wanrep.emulator.WorkloadRegistry;
import org.wanrep.emulator.workload.SqlTransaction;

import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SyntheticWorkloadTest {
    @Test void anUpdateIsTenSingleRowUpdatesInOneRequestAndAQueryIsOneReadOnlyStatement() {
        SyntheticWorkload w = new SyntheticWorkload();
        Random r = new Random(7);
        int updates = 0;
        for (int i = 0; i < 1000; i++) {
            SqlTransaction t = (SqlTransaction) w.next(r);
            if (t.type().equals("update")) {
                updates++;
                assertThat(t.readOnly()).isFalse();
                assertThat(t.sql().split("; ")).hasSize(10).allMatch(s -> s.startsWith("UPDATE synth_"));
                Matcher m = Pattern.compile("synth_(\\d+) SET v = v \\+ 1 WHERE id = (\\d+)").matcher(t.sql());
                while (m.find()) {
                    assertThat(Integer.parseInt(m.group(1))).isBetween(1, 10);
                    assertThat(Integer.parseInt(m.group(2))).isBetween(1, 10_000);
                }
            } else {
                assertThat(t.readOnly()).isTrue();
                assertThat(t.sql()).doesNotContain(";").startsWith("SELECT").contains("UNION ALL");
            }
        }
        assertThat(updates).isBetween(450, 550);
        assertThat(w.connectionProperties().getProperty("preferQueryMode")).isEqualTo("simple");
    }

    @Test void underPrimaryCopyEachSitesUpdatesAreLabelledLocalWhenThatSiteExecutesThem() {
        List<String> sites = List.of("a", "b", "c", "d");
        Map<String, String> primaries = SyntheticWorkload.roundRobinPrimaries(10, sites);
        assertThat(primaries).containsEntry("synth_1", "a").containsEntry("synth_4", "d").containsEntry("synth_5", "a").containsEntry("synth_10", "b");
        SyntheticWorkload w = new SyntheticWorkload().withPrimaries(primaries, sites);
        assertThat(w.types()).containsExactly("update-lw", "update-rw", "query");
        assertThat(w.forSite("c").types()).isEqualTo(w.types());
        SyntheticWorkload updatesOnly = new SyntheticWorkload(10, 100, 1.0, 10).withPrimaries(primaries, sites);
        assertThatThrownBy(() -> updatesOnly.next(new Random(1))).isInstanceOf(IllegalStateException.class).hasMessageContaining("forSite");

        Map<String, Integer> local = new TreeMap<>();
        int updates = 0;
        for (String site : sites) {
            SyntheticWorkload at = w.forSite(site);
            Random r = new Random(site.hashCode());
            for (int i = 0; i < 2000; i++) {
                SqlTransaction t = (SqlTransaction) at.next(r);
                if (t.readOnly()) continue;
                updates++;
                TreeSet<String> written = new TreeSet<>();
                Matcher m = Pattern.compile("UPDATE (synth_\\d+) ").matcher(t.sql());
                while (m.find()) written.add(m.group(1));
                // the executor: the primary of most written tables; a tie goes to the origin if tied, else the first site
                Map<String, Integer> votes = new TreeMap<>();
                for (String w2 : written) votes.merge(primaries.get(w2), 1, Integer::sum);
                int max = java.util.Collections.max(votes.values());
                String executor = votes.getOrDefault(site, 0) == max ? site : sites.stream().filter(x -> votes.getOrDefault(x, 0) == max).findFirst().orElseThrow();
                assertThat(t.type()).isEqualTo(executor.equals(site) ? "update-lw" : "update-rw");
                if (t.type().equals("update-lw")) local.merge(site, 1, Integer::sum);
            }
        }
        // the transactions are the study's (random tables): a quarter would be local if the executor were
        // drawn at random; ties going to the origin make it more, without making every one local
        int locals = local.values().stream().mapToInt(Integer::intValue).sum();
        assertThat(locals).isBetween(updates / 4, updates / 2);
        assertThat(local).containsOnlyKeys(sites);   // the load is spread, not sent to one site
        assertThatThrownBy(() -> new SyntheticWorkload().withPrimaries(Map.of("synth_1", "a"), sites)).hasMessageContaining("synth_2");
    }

    @Test void theRegistryKnowsSyntheticAndNamesDbt1EvenBeforeItIsPluggedIn() {
        assertThat(WorkloadRegistry.create("synthetic", WorkloadOptions.defaults())).isInstanceOf(SyntheticWorkload.class);
        assertThat(WorkloadRegistry.names()).contains("synthetic", "dbt1");
        try {
            assertThat(WorkloadRegistry.create("dbt1", WorkloadOptions.defaults()).name()).isEqualTo("dbt1");
        } catch (IllegalArgumentException notYet) {
            assertThat(notYet).hasMessageContaining("not available");
        }
        assertThatThrownBy(() -> WorkloadRegistry.create("tpcc", WorkloadOptions.defaults())).hasMessageContaining("unknown workload");
    }
}
