package org.wanrep.gcs.wan;

import org.junit.jupiter.api.Test;
import org.wanrep.gcs.Delivery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

class LatencyMatrixTest {
    @Test
    void loadsEveryPreset() {
        for (String p : LatencyMatrix.PRESETS) {
            LatencyMatrix m = LatencyMatrix.load(p);
            assertThat(m.sites()).isNotEmpty();
            for (int i = 0; i < m.sites().size(); i++) assertThat(m.delay(i, i)).isZero();
        }
        assertThat(LatencyMatrix.load("na4").delay("montreal", "berkeley")).isEqualTo(38);
        assertThat(LatencyMatrix.load("na8").first(3).sites()).containsExactly("montreal", "toronto", "boston");
    }

    @Test
    void rejectsMalformedMatricesClearly() {
        assertThatThrownBy(() -> LatencyMatrix.parse("site,a,b\na,0,1\n", "x")).hasMessageContaining("2 sites but there are 1 rows");
        assertThatThrownBy(() -> LatencyMatrix.parse("site,a,b\nb,0,1\na,1,0\n", "x")).hasMessageContaining("expected 'a'");
        assertThatThrownBy(() -> LatencyMatrix.parse("site,a,b\na,0,z\nb,1,0\n", "x")).hasMessageContaining("not a number");
        assertThatThrownBy(() -> LatencyMatrix.parse("site,a,b\na,0,-1\nb,1,0\n", "x")).hasMessageContaining("negative");
        assertThatThrownBy(() -> LatencyMatrix.load("/no/such/file.csv")).hasMessageContaining("neither a preset");
        assertThatThrownBy(() -> LatencyMatrix.load("na4").indexOf("paris")).hasMessageContaining("not in latency matrix");
    }

    @Test
    void deliveryBoundFollowsTheDesignFormulas() {
        LatencyMatrix m = LatencyMatrix.load("na4");   // sequencer montreal (index 0)
        DeliveryBound b = new DeliveryBound(m, "montreal");
        int mon = 0, bos = 1, chi = 2, ber = 3;
        assertThat(b.optimistic(ber, chi)).isEqualTo(26);
        // agreed at chicago of a berkeley message: max(26, 38 + 13)
        assertThat(b.agreed(ber, chi)).isEqualTo(51);
        assertThat(b.agreed(mon, ber)).isEqualTo(38);
        assertThat(b.agreed(ber, ber)).isEqualTo(76);
        // safe at berkeley of its own message: a majority (3 of 4) known to hold it, berkeley itself included:
        // the third smallest of A(berkeley) and A(m) + d(m, berkeley)
        double[] known = {b.agreed(ber, ber), b.agreed(ber, mon) + 38, b.agreed(ber, bos) + 37, b.agreed(ber, chi) + 26};
        java.util.Arrays.sort(known);
        assertThat(b.safe(ber, ber)).isCloseTo(Math.max(b.agreed(ber, ber), known[2]), within(1e-9));
        // berkeley 76, montreal 38 + 38, chicago 51 + 26, boston 46 + 37: the third is chicago's 77, not boston's 83
        assertThat(b.safe(ber, ber)).isEqualTo(77);
        assertThat(b.fin(Delivery.OPT_SAFE, ber, ber)).isEqualTo(b.safe(ber, ber));
        assertThat(b.finAll(Delivery.AGREED, mon)).isEqualTo(38);
    }
}
