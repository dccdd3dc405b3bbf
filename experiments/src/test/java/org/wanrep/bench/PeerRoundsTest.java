package org.wanrep.bench;

import org.junit.jupiter.api.Test;
import org.wanrep.bench.PeerBench.Run;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** Rounds of alternated systems combined by the median of their per-round ratios to direct. */
class PeerRoundsTest {
    private static Run run(String system, double tps, long failed, double middleware) {
        return new Run("w", system, tps, failed, "", (long) tps * 20, 2000, 50, 1000, middleware);
    }

    /** The machine slows down between rounds: each round's ratio is to that round's direct run. */
    @Test
    void aSystemsRatioIsTheMedianOfItsRoundsRatios() {
        List<List<Run>> rounds = List.of(
                List.of(run("direct", 5000, 0, 0), run("pgpool-II", 1000, 0, 600), run("wanrep", 1100, 1, 900)),    // 0.20, 0.22
                List.of(run("direct", 4000, 0, 0), run("pgpool-II", 840, 0, 650), run("wanrep", 800, 0, 1000)),     // 0.21, 0.20
                List.of(run("direct", 4500, 0, 0), run("pgpool-II", 855, 0, 620), run("wanrep", 1035, 2, 950)));    // 0.19, 0.23
        List<Run> combined = PeerRounds.combine(rounds);
        assertThat(combined).extracting(Run::system).containsExactly("direct", "pgpool-II", "wanrep");
        assertThat(combined.get(0).tps()).isEqualTo(4500);
        assertThat(combined.get(1).tps() / combined.get(0).tps()).isCloseTo(0.20, within(1e-9));
        assertThat(combined.get(2).tps() / combined.get(0).tps()).isCloseTo(0.22, within(1e-9));
        assertThat(combined.get(2).failed()).isEqualTo(3);
        assertThat(combined.get(2).middlewareMicrosPerTxn()).isEqualTo(950);
        assertThat(combined.get(2).transactions()).isEqualTo(22_000 + 16_000 + 20_700);
        String table = PeerRounds.table("w", rounds);
        assertThat(table).contains("3 rounds").contains("0.220").contains("0.200").contains("median");
        assertThat(PeerRounds.json(rounds)).hasSize(3);
        assertThat(PeerRounds.json(rounds).get(1).get("wanrep")).asString().contains("ratio=0.2");
    }

    @Test
    void oneRoundIsItself() {
        List<Run> one = List.of(run("direct", 5000, 0, 0), run("wanrep", 900, 0, 1000));
        assertThat(PeerRounds.combine(List.of(one))).isSameAs(one);
        assertThat(PeerRounds.median(List.of(3.0, 1.0, 2.0, 10.0))).isEqualTo(2.5);
    }
}
