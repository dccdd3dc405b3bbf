package org.wanrep.emulator;

import org.wanrep.emulator.synthetic.SyntheticWorkload;

/**
 * Every workload's options, as the command line gives them; each workload reads its own.
 * Synthetic: {@code tables, rows, updateFraction, statements}. DBT-1: {@code mix}
 * (browsing, shopping, ordering), {@code items}, {@code ebs} (emulated browsers, the scale of the customers).
 */
public record WorkloadOptions(int tables, int rows, double updateFraction, int statements, String mix, int items, int ebs) {
    public static WorkloadOptions defaults() {
        return new WorkloadOptions(SyntheticWorkload.DEFAULT_TABLES, SyntheticWorkload.DEFAULT_ROWS, SyntheticWorkload.DEFAULT_UPDATE_FRACTION,
                SyntheticWorkload.DEFAULT_STATEMENTS, "shopping", 10_000, 10);
    }
}
