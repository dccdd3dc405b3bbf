package org.wanrep.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.wanrep.cluster.ClusterLayout;
import org.wanrep.config.Config;
import org.wanrep.emulator.WorkloadOptions;
import org.wanrep.emulator.WorkloadRegistry;
import org.wanrep.emulator.dbt1.Dbt1Workload;
import org.wanrep.emulator.dbt1.Mix;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * DBT-1 on the command line, no database: the registry, {@code cluster up --workload dbt1}'s
 * configuration, and {@code emulate}'s check of the functions' table sets in a cluster's configuration.
 */
class Dbt1CommandLineTest {
    static final Map<String, String> DBT1 = new Dbt1Workload().middlewareSettings();
    static final List<String> SITES = List.of("montreal", "boston");

    @Test void theRegistryBuildsDbt1FromTheCommandLineOptions() {
        WorkloadOptions o = new WorkloadOptions(10, 100, 0.5, 10, "ordering", 1_000, 3);
        Dbt1Workload w = (Dbt1Workload) WorkloadRegistry.create("dbt1", o);
        assertThat(w.options().mix()).isEqualTo(Mix.ORDERING);
        assertThat(w.options().scale().items()).isEqualTo(1_000);
        assertThat(w.options().scale().ebs()).isEqualTo(3);
        assertThat(w.options().thinkTime()).as("closed loops without --think-time use TPC-W's").isTrue();
        assertThat(w.toString()).contains("ordering").contains("1,000 items");
        assertThat(WorkloadRegistry.names()).containsExactly("synthetic", "dbt1");
        assertThat(WorkloadRegistry.middlewareSettings("dbt1")).isEqualTo(DBT1).hasSize(28);
        assertThat(WorkloadRegistry.middlewareSettings("synthetic")).isEmpty();
        assertThatThrownBy(() -> WorkloadRegistry.create("dbt1", new WorkloadOptions(10, 100, 0.5, 10, "buying", 1_000, 3)))
                .hasMessageContaining("browsing, shopping or ordering");
        assertThatThrownBy(() -> WorkloadRegistry.create("tpcc", WorkloadOptions.defaults())).hasMessageContaining("known: [synthetic, dbt1]");
    }

    @Test void clusterUpWithAWorkloadMergesItsSettingsUnderTheFileAndTheOverrides(@TempDir Path dir) throws Exception {
        assertThat(ClusterCommand.configuration(null, List.of("dbt1"), List.of()).explicit()).containsAllEntriesOf(DBT1);
        assertThat(ClusterCommand.configuration(null, List.of(), List.of()).explicit()).isEmpty();

        Path file = dir.resolve("base.properties");
        Files.writeString(file, "delivery=opt-safe\nfunctions.home.reads=public.customer,public.item,public.author\n");
        Map<String, String> c = ClusterCommand.configuration(file, List.of("dbt1"), List.of("functions.admin_confirm.writes=*")).explicit();
        assertThat(c).containsEntry("delivery", "opt-safe")
                .containsEntry("functions.home.reads", "public.customer,public.item,public.author")   // the file wins
                .containsEntry("functions.admin_confirm.writes", "*")                              // --set wins
                .containsEntry("functions.buy_confirm.writes", DBT1.get("functions.buy_confirm.writes"));

        assertThatThrownBy(() -> ClusterCommand.configuration(null, List.of("tpcc"), List.of()))
                .isInstanceOf(Config.ConfigException.class).hasMessageContaining("unknown workload").hasMessageContaining("dbt1");
    }

    @Test void theCheckTellsCompleteMissingAndUnderDeclaredTableSetsApart() {
        assertThat(check(DBT1).complete()).isTrue();

        FunctionSettingsCheck none = check(Map.of());
        assertThat(none.functions()).isEqualTo(14);
        assertThat(none.missing()).hasSize(14).contains("buy_confirm");
        assertThat(none.underDeclared()).isEmpty();

        Map<String, String> under = new LinkedHashMap<>(DBT1);
        under.put("functions.buy_confirm.writes", "public.orders,public.order_line,public.cc_xacts,public.item");   // no address
        under.put("site.boston.functions.shopping_cart.writes", "");                                              // read-only at one site
        FunctionSettingsCheck u = check(under);
        assertThat(u.missing()).isEmpty();
        assertThat(u.underDeclared()).hasSize(3)
                .anySatisfy(l -> assertThat(l).startsWith("functions.buy_confirm at site montreal").contains("public.address"))
                .anySatisfy(l -> assertThat(l).startsWith("functions.shopping_cart at site boston"));

        Map<String, String> over = new LinkedHashMap<>(DBT1);
        over.put("functions.home.writes", "public.item");          // more than needed: safe
        over.put("functions.buy_confirm.writes", "*");             // every table: safe
        over.put("functions.search_request.reads", "item");        // bare names are in schema public
        over.remove("functions.admin_request.reads");
        over.remove("functions.admin_request.writes");
        over.put("functions.public.admin_request.reads", "public.item,public.author");   // schema-qualified function
        assertThat(check(over).complete()).as(check(over).toString()).isTrue();

        Map<String, String> someMissing = new LinkedHashMap<>(DBT1);
        someMissing.keySet().removeIf(k -> k.startsWith("functions.order_display."));
        assertThat(check(someMissing).missing()).containsExactly("order_display");
    }

    private static FunctionSettingsCheck check(Map<String, String> cluster) {
        return FunctionSettingsCheck.of(DBT1, Config.build(cluster, List.of()), SITES);
    }

    @Test void emulateRefusesAClusterThatUnderDeclaresAndSaysWhatItChecked(@TempDir Path dir) throws Exception {
        writeCluster(dir, Map.of("functions.buy_confirm.writes", "public.orders"));
        Run bad = emulate("--cluster", dir.toString(), "--workload", "dbt1", "--out", dir.resolve("out").toString());
        assertThat(bad.code).isEqualTo(2);
        assertThat(bad.err).contains("declares too few tables").contains("functions.buy_confirm").contains("cluster up --workload dbt1");

        writeCluster(dir, DBT1);
        Run ok = emulate("--cluster", dir.toString(), "--workload", "dbt1", "--mix", "ordering", "--items", "1k", "--out", dir.resolve("out").toString());
        assertThat(ok.out).contains("declares the table sets of workload dbt1's functions").doesNotContain("WARNING");
        assertThat(ok.err).contains("cannot connect");   // the check passed; nobody listens on port 1

        writeCluster(dir, Map.of("delivery", "safe"));
        Run missing = emulate("--cluster", dir.toString(), "--workload", "dbt1", "--out", dir.resolve("out").toString());
        assertThat(missing.out).contains("WARNING").contains("no table sets for 14 of the 14 functions").contains("functions.home.reads=");
        assertThat(missing.err).contains("cannot connect");
    }

    @Test void emulateAgainstOneHostWarnsThatItCannotCheckAndListsTheSettings(@TempDir Path dir) {
        Run r = emulate("--host", "127.0.0.1", "--port", "1", "--workload", "dbt1", "--out", dir.toString());
        assertThat(r.code).isEqualTo(2);
        assertThat(r.err).doesNotContain("unknown workload").contains("cannot connect");
        assertThat(r.out).contains("WARNING: workload dbt1 needs the table sets").contains("functions.buy_confirm.writes=public.address,");

        Run s = emulate("--host", "127.0.0.1", "--port", "1", "--workload", "synthetic", "--out", dir.toString());
        assertThat(s.out).doesNotContain("WARNING");
        assertThat(emulate("--host", "127.0.0.1", "--port", "1", "--workload", "dbt1", "--items", "5000", "--out", dir.toString()).err)
                .contains("items must be one of 1k, 10k, 100k, 1M, 10M");
    }

    private static void writeCluster(Path dir, Map<String, String> settings) throws Exception {
        new ClusterLayout(SITES.stream().map(s -> new ClusterLayout.SiteEntry(s, "127.0.0.1", 1, "127.0.0.1", 1, 0, "", -1, "")).toList()).write(dir);
        StringBuilder b = new StringBuilder();
        settings.forEach((k, v) -> b.append(k).append('=').append(v).append('\n'));
        Files.writeString(ClusterLayout.configFile(dir), b);
    }

    record Run(int code, String out, String err) {}

    private static Run emulate(String... args) {
        String[] all = new String[args.length + 1];
        all[0] = "emulate";
        System.arraycopy(args, 0, all, 1, args.length);
        PrintStream stdout = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        StringWriter err = new StringWriter();
        int code;
        try {
            System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
            code = Main.commandLine().setErr(new PrintWriter(err, true)).execute(all);
        } finally {
            System.setOut(stdout);
        }
        Run r = new Run(code, captured.toString(StandardCharsets.UTF_8), err.toString());
        System.out.println("emulate " + String.join(" ", args) + " -> " + code + "\n" + r.out + r.err);
        return r;
    }
}
