package org.wanrep.emulator.report;

import java.util.List;

/**
 * One emulator's run against one site (or all sites together). {@code transactions} were
 * submitted in all, of which the first {@code discardedWarmup} and the last
 * {@code discardedCooldown} are left out of every statistic except {@code lateStartsAll};
 * {@code unfinished} never answered before the run gave up waiting. {@code achievedRateTps} is the
 * rate at which the measured transactions actually started; {@code targetRateTps} is null in
 * closed-loop runs. {@code phases} is the proxy's breakdown over the measured window (empty with
 * a note when the target is not a wanrep proxy).
 */
public record SiteResult(String site, String target, String load, Double targetRateTps, double achievedRateTps,
                         long transactions, long discardedWarmup, long discardedCooldown, long unfinished, long lateStartsAll,
                         double windowS, TypeResult all, List<TypeResult> types, List<PhaseRow> phases, String phasesNote) {}
