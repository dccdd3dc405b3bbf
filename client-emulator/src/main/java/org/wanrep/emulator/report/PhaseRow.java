package org.wanrep.emulator.report;

/** One row of a proxy's {@code SHOW wanrep.phases}: where the updates that site originated spent their time. */
public record PhaseRow(String phase, long count, double meanMs, double p50Ms, double p99Ms) {}
