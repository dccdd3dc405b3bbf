package org.wanrep.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;

/**
 * The settings a named client workload needs in the cluster's configuration, such as the table sets
 * of its stored functions ({@code functions.NAME.reads} / {@code .writes}). The workloads live in the
 * client emulator, which this module does not depend on; the command line (experiments) provides
 * them through {@link ServiceLoader}, so {@code wanrep cluster up --workload dbt1} works wherever
 * the whole command line is on the class path.
 */
public interface WorkloadSettings {
    /** The workload names this provider knows. */
    List<String> workloads();

    /** The settings {@code workload} needs (possibly none); only called for a name of {@link #workloads()}. */
    Map<String, String> settings(String workload);

    /** The settings of {@code workload} from the first provider that knows it; fails naming the known workloads. */
    static Map<String, String> of(String workload) {
        List<String> known = new ArrayList<>();
        for (WorkloadSettings p : ServiceLoader.load(WorkloadSettings.class)) {
            if (p.workloads().contains(workload)) return p.settings(workload);
            known.addAll(p.workloads());
        }
        if (known.isEmpty())
            throw new Config.ConfigException("--workload " + workload + ": no workloads on the class path (run this through ./wanrep, whose command line knows them)");
        throw new Config.ConfigException("--workload " + workload + ": unknown workload; known: " + known);
    }
}
