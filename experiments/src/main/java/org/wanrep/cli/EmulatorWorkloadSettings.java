package org.wanrep.cli;

import org.wanrep.config.WorkloadSettings;
import org.wanrep.emulator.WorkloadRegistry;

import java.util.List;
import java.util.Map;

/** The emulator's workloads ({@link WorkloadRegistry}) as the middleware's {@code --workload} settings source. */
public final class EmulatorWorkloadSettings implements WorkloadSettings {
    @Override public List<String> workloads() { return WorkloadRegistry.names(); }

    @Override public Map<String, String> settings(String workload) { return WorkloadRegistry.middlewareSettings(workload); }
}
