package org.wanrep.experiments;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.wanrep.emulator.report.ResultFiles;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** Fig. 5 end to end, CI-sized: three sites (na4), two loads, 40 transactions per site, three delivery guarantees. */
class ExperimentRunTest {
    @Test void fig5RunsEveryPointAndWritesDataPlotsAndAReportWithEveryFinding(@TempDir Path dir) throws Exception {
        Experiment e = Experiments.get("fig5", true).withVariant("ci").withSiteCounts(List.of(3)).withLoads(List.of(20.0, 40.0))
                .withTransactionsPerSite(40).withWarmupSeconds(1).withWorkload(new Experiment.WorkloadSpec(4, 1000, 0.5, 10));
        // a warm-up per setup (20 transactions per site): the first setup, agreed, otherwise runs on a cold JIT, and its
        // mean came out above opt-safe's once its sites started 2 s faster. One attempt per point: on a machine shared
        // with other work a point may come out disturbed, and is then kept as such
        Results r = new ExperimentRunner(new ExperimentRunner.Options(dir, 7, 8, Duration.ofSeconds(5), 1), System.out).run(e);

        // every point ran and kept up (unless other work disturbed it), every replica ended identical
        assertThat(r.rows()).hasSize(3 * 2 * 3);   // setups x loads x (update, query, all)
        assertThat(r.rows()).filteredOn(x -> x.type().equals("all")).allSatisfy(x -> {
            assertThat(x.status()).as(x.toString()).isIn(Results.Status.OK, Results.Status.DISTURBED);
            assertThat(x.measured()).isEqualTo(3 * 32);
        });
        assertThat(r.checks()).hasSize(3).allSatisfy(c -> assertThat(c.verdict()).isEqualTo("same"));
        assertThat(r.phases()).anySatisfy(p -> assertThat(p.phase()).isEqualTo("optimistic_delivery"));

        Path d = dir.resolve("fig5");
        for (String f : List.of("points.csv", "phases.csv", "fig5b-overlap.csv", "results.json", "report.md", "fig5a.png", "fig5a-delivery.png", "fig5b.png"))
            assertThat(d.resolve(f)).as(f).isNotEmptyFile();
        assertThat(Files.readAllLines(d.resolve("points.csv"))).hasSize(1 + 18).first().asString().startsWith("experiment,variant,setup,execution,delivery,queries,sites,load_tps,type,status,saturated");
        assertThat(d.resolve("points/opt-safe-3sites-40tps/results.json")).isNotEmptyFile();

        String report = Files.readString(d.resolve("report.md"));
        Pattern line = Pattern.compile("(?m)^\\d+\\. study: .+ / ours: .+ / \\*\\*(agrees|differs|inconclusive)\\*\\*  $");
        assertThat(line.matcher(report).results().count()).isEqualTo(e.findings().size());
        assertThat(report).contains("rule: at each point where all of agreed, opt-safe kept up").contains("| agreed | 3 | same |")
                .contains("## Fig. 5b: opt-safe, execution overlapped with the ordering");
        // opt-safe commits only at the final (uniform) delivery: slower than agreed on any WAN, so this finding never differs
        assertThat(ExperimentFiles.evaluate(r).get(0).verdict()).isNotEqualTo(Finding.Verdict.DIFFERS);

        JsonNode json = ResultFiles.JSON.readTree(d.resolve("results.json").toFile());
        assertThat(json.get("findings")).hasSize(e.findings().size());
        assertThat(json.get("definition").get("setups")).hasSize(3);
        assertThat(json.get("points")).hasSize(18);
    }
}
