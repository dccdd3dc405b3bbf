package org.wanrep.emulator;

import org.wanrep.emulator.synthetic.SyntheticWorkload;
import org.wanrep.emulator.workload.Workload;

import java.util.ArrayList;
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
        // once org.wanrep.emulator.dbt1.Dbt1Workload is merged, plug it in here, e.g.:
        // AVAILABLE.put("dbt1", o -> new Dbt1Workload(o.mix(), o.items(), o.ebs()));
    }

    /** Named on the command line but not in this build yet: why. */
    private static final Map<String, String> PLANNED = Map.of(
            "dbt1", "the OSDL-DBT-1 workload (org.wanrep.emulator.dbt1.Dbt1Workload) is not available in this build yet");

    public static Workload create(String name, WorkloadOptions o) {
        Function<WorkloadOptions, Workload> f = AVAILABLE.get(name);
        if (f != null) return f.apply(o);
        if (PLANNED.containsKey(name)) throw new IllegalArgumentException("workload " + name + ": " + PLANNED.get(name));
        throw new IllegalArgumentException("unknown workload '" + name + "'; known: " + names());
    }

    /** Every name the command line accepts, available or not. */
    public static List<String> names() {
        List<String> ns = new ArrayList<>(AVAILABLE.keySet());
        for (String p : PLANNED.keySet()) if (!ns.contains(p)) ns.add(p);
        return ns;
    }
}
