package org.wanrep.emulator.report;

import java.util.List;

/**
 * One emulator's run against one site (or all sites together). {@code transactions} were
 * submitted in all, of which the first {@code discardedWarmup} and the last
 * {@code discardedCooldown} are left out of every statistic except {@code lateStartsAll};
 * {@code unfinished} never answered before the run gave up waiting. {@code achievedRateTps} is the
 * rate at which the measured transactions actually started; {@code targetRateTps} is null in
 * closed-loop runs. A start is late either because the emulator handed the transaction over late
 * ({@code dispatchLagP99Ms}: the scheduling thread woke late, a busy machine) or because it waited
 * for a free connection ({@code connectionWaitP99Ms}: the pool is too small or the server slow). {@code phases} is the proxy's breakdown over the measured window (empty with
 * a note when the target is not a wanrep proxy).
 */
public record SiteResult(String site, String target, String load, Double targetRateTps, double achievedRateTps,
                         long transactions, long discardedWarmup, long discardedCooldown, long unfinished, long lateStartsAll,
                         double dispatchLagP99Ms, double connectionWaitP99Ms,
                         double windowS, TypeResult all, List<TypeResult> types, List<PhaseRow> phases, String phasesNote) {}
