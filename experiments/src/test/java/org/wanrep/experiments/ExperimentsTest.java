package org.wanrep.experiments;

import org.junit.jupiter.api.Test;
import org.wanrep.experiments.Experiment.Breakdown;
import org.wanrep.experiments.Experiment.Lines;
import org.wanrep.experiments.Experiment.Overlap;
import org.wanrep.experiments.Experiment.Setup;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The definition set: every figure of the study is there, the quick variants are smaller, every finding can be evaluated. */
class ExperimentsTest {
    @Test void everyFigureOfTheStudyAndBothBaselinesAreDefined() {
        assertThat(Experiments.names()).containsExactly("centralized", "lan", "fig3", "fig4", "fig5", "fig6", "fig7");
        assertThat(Experiments.get("fig3", false).panels()).extracting(Experiment.Panel::id).contains("fig3a", "fig3b");
        assertThat(Experiments.get("fig4", false).panels()).extracting(Experiment.Panel::id).contains("fig4a", "fig4b");
        assertThat(Experiments.get("fig5", false).panels()).extracting(Experiment.Panel::id).contains("fig5a", "fig5b");
        assertThat(Experiments.get("fig6", false).panels()).extracting(Experiment.Panel::id).contains("fig6a", "fig6b");
        assertThat(Experiments.get("fig7", false).panels()).extracting(Experiment.Panel::id).contains("fig7a", "fig7b");
        assertThatThrownBy(() -> Experiments.get("fig9", true)).hasMessageContaining("unknown experiment").hasMessageContaining("fig5");
    }

    @Test void fullVariantsUseTheStudysSizesAndQuickOnesAreSmallerAndAboutFiveMinutes() {
        for (String n : Experiments.names()) {
            Experiment full = Experiments.get(n, false), quick = Experiments.get(n, true);
            assertThat(full.variant()).isEqualTo("full");
            assertThat(quick.variant()).isEqualTo("quick");
            assertThat(full.transactionsPerSite()).as(n).isEqualTo(800);
            assertThat(full.warmupFraction()).isEqualTo(0.1);
            assertThat(full.workload()).isEqualTo(Experiment.WorkloadSpec.STUDY);
            assertThat(quick.transactions()).as(n).isLessThan(full.transactions());
            assertThat(quick.points()).as(n).isLessThanOrEqualTo(full.points());
            assertThat(quick.estimatedSeconds()).as(n).isLessThan(6 * 60);
            assertThat(quick.findings()).as(n).isNotEmpty();
            assertThat(quick.setups()).isEqualTo(full.setups());
        }
    }

    @Test void theConfigurationsAreTheStudys() {
        Experiment f3 = Experiments.get("fig3", false);
        assertThat(f3.matrix()).isEqualTo("na4");
        assertThat(f3.siteCounts()).containsExactly(4);
        assertThat(f3.setups()).extracting(Setup::execution).containsExactly("symmetric", "primary-copy", "local-copy");
        assertThat(f3.setups()).extracting(Setup::delivery).containsOnly("agreed");
        assertThat(f3.setup("pc").primaries()).isTrue();
        assertThat(((Breakdown) f3.panel("fig3b")).loads()).containsExactly(20.0, 40.0);
        assertThat(((Lines) f3.panel("fig3a")).curves()).extracting(Experiment.Curve::type).containsExactly("update", "update-lw", "update", "update-rw");

        Experiment f4 = Experiments.get("fig4", true);
        assertThat(f4.setups()).extracting(Setup::queries).containsExactly("snapshot", "locked", "snapshot", "locked");
        assertThat(f4.setups()).extracting(Setup::execution).containsExactly("symmetric", "symmetric", "local-copy", "local-copy");

        Experiment f5 = Experiments.get("fig5", true);
        assertThat(f5.setups()).extracting(Setup::delivery).containsExactly("agreed", "safe", "opt-safe");
        assertThat(((Overlap) f5.panel("fig5b")).setup()).isEqualTo("opt-safe");

        Experiment f6 = Experiments.get("fig6", false), f7 = Experiments.get("fig7", false);
        assertThat(f6.matrix()).isEqualTo("na8");
        assertThat(f6.siteCounts()).containsExactly(2, 4, 6, 8);
        assertThat(f6.loads()).containsExactly(20.0, 40.0, 60.0, 80.0);
        assertThat(f6.setups().get(0).execution()).isEqualTo("primary-copy");
        assertThat(f6.setups().get(0).delivery()).isEqualTo("opt-safe");
        assertThat(f6.findings()).hasSize(4);   // with 80 tps and 6 sites, every finding of section 5.7 is decidable
        assertThat(f7.setups().get(0).execution()).isEqualTo("symmetric");
        assertThat(f7.setups().get(0).delivery()).isEqualTo("agreed");

        assertThat(Experiments.get("lan", false).matrix()).isEqualTo("lan");
        Experiment c = Experiments.get("centralized", false);
        assertThat(c.siteCounts()).containsExactly(1);
        assertThat(c.setups().get(0).target()).isEqualTo(Experiment.Target.POSTGRES);
    }

    @Test void everyFindingEvaluatesOnAnEmptyRunAsInconclusiveWithoutFailing() {
        for (boolean quick : List.of(true, false))
            for (Experiment e : Experiments.all(quick)) {
                Results empty = new Results(e, "now", 0, List.of(), List.of(), List.of());
                for (Finding f : e.findings()) {
                    assertThat(f.rule()).as(e.name()).isNotBlank();
                    assertThat(f.evaluate(empty).verdict()).as(e.name() + ": " + f.study()).isEqualTo(Finding.Verdict.INCONCLUSIVE);
                }
                String report = ExperimentFiles.report(empty, ExperimentFiles.evaluate(empty));
                assertThat(report).contains("## Findings").contains("/ **inconclusive**");
            }
    }

    @Test void aDefinitionRefusesCurvesOfUnknownSetupsAndPlainPostgresOnSeveralSites() {
        Experiment f5 = Experiments.get("fig5", true);
        assertThatThrownBy(() -> new Experiment("x", "t", "s", "quick", "na4", List.of(4), List.of(10.0), f5.workload(), 100, 0.1, 0, 1000,
                f5.setups(), List.of(new Lines("p", "p", Experiment.Axis.LOAD, Experiment.Metric.P50, List.of(Experiment.Curve.vsLoad("c", "nope", "update")))),
                List.of(), List.of())).hasMessageContaining("unknown setup nope");
        assertThatThrownBy(() -> Experiments.get("centralized", true).withSiteCounts(List.of(1, 2))).hasMessageContaining("one site only");
    }
}
