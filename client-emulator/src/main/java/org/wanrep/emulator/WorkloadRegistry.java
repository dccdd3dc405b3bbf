package org.wanrep.emulator;

import org.wanrep.emulator.dbt1.Dbt1Options;
import org.wanrep.emulator.dbt1.Dbt1Workload;
import org.wanrep.emulator.dbt1.Mix;
import org.wanrep.emulator.dbt1.Scale;
import org.wanrep.emulator.synthetic.SyntheticWorkload;
import org.wanrep.emulator.workload.Workload;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/** The workloads the emulator knows by name. */
public final class WorkloadRegistry {
    private WorkloadRegistry() {}

    private static final Map<String, Function<WorkloadOptions, Workload>> AVAILABLE = new LinkedHashMap<>();
    static {
        AVAILABLE.put("synthetic", o -> new SyntheticWorkload(o.tables(), o.rows(), o.updateFraction(), o.statements()));
        // think time on: closed-loop runs without --think-time use TPC-W's; open-loop runs ignore it
        AVAILABLE.put("dbt1", o -> new Dbt1Workload(new Dbt1Options(new Scale(o.items(), o.ebs()), Mix.parse(o.mix()), true)));
    }

    public static Workload create(String name, WorkloadOptions o) {
        Function<WorkloadOptions, Workload> f = AVAILABLE.get(name);
        if (f == null) throw new IllegalArgumentException("unknown workload '" + name + "'; known: " + names());
        return f.apply(o);
    }

    /**
     * The middleware settings workload {@code name} needs (stored functions' table sets), which do
     * not depend on its options; empty for a workload that needs none.
     */
    public static Map<String, String> middlewareSettings(String name) {
        return create(name, WorkloadOptions.defaults()).middlewareSettings();
    }

    /** Every name the command line accepts. */
    public static List<String> names() { return List.copyOf(AVAILABLE.keySet()); }
}
