package org.wanrep.emulator.synthetic;

import org.junit.jupiter.api.Test;
import org.wanrep.emulator.WorkloadOptions;
import org.wanrep.emulator.WorkloadRegistry;
import org.wanrep.emulator.workload.SqlTransaction;

import java.util.Random;
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
