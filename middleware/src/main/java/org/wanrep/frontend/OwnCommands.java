package org.wanrep.frontend;

import org.wanrep.txn.PhaseStats;
import org.wanrep.txn.ReplicationEngine;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * wanrep's own commands, answered by the proxy without the replica: {@code SHOW wanrep.phases} (the
 * response-time breakdown of updates that originated at this site), {@code RESET wanrep.phases}, and
 * {@code SHOW wanrep.sites} (this site's state: serving or not, the last GSN delivered, the delivered
 * transactions not finished yet, the members of its view; then one row per other site with the backlog
 * it last reported, which flow control acts on), {@code SHOW wanrep.certification} (interactive blocks
 * certified and aborted by certification here). They work whether the site is current or not.
 */
final class OwnCommands {
    private OwnCommands() {}

    /** What a command answers: a command tag, and columns and rows (none for RESET). */
    record Answer(String tag, List<String> columns, List<List<String>> rows) {}

    private static final Pattern COMMAND = Pattern.compile("(?is)\\s*(show|reset)\\s+wanrep\\.(phases|sites|certification)\\s*;?\\s*");

    private static final Pattern ISOLATE = Pattern.compile("(?is)\\s*set\\s+wanrep\\.partitioned_from\\s*(=|to)\\s*'([A-Za-z0-9_,\\- ]*)'\\s*;?\\s*");

    /** The answer to {@code sql} if it is one of our commands, else null (nothing is done). */
    static Answer answer(String sql, SiteContext ctx) {
        Matcher i = ISOLATE.matcher(sql);
        if (i.matches() && ctx.faultInjection() && ctx.engine().gcs() instanceof org.wanrep.gcs.jgroups.JGroupsGcs g) {
            // fault injection (testing.fault_injection = on): what this site receives from these sites is dropped
            java.util.Set<String> from = new java.util.TreeSet<>();
            for (String x : i.group(2).split(",")) if (!x.isBlank()) from.add(x.trim());
            g.partitionFrom(from);
            return new Answer("SET", null, List.of());
        }
        Matcher m = COMMAND.matcher(sql);
        if (!m.matches()) return null;
        boolean reset = m.group(1).equalsIgnoreCase("reset");
        String what = m.group(2).toLowerCase(Locale.ROOT);
        ReplicationEngine e = ctx.engine();
        if (what.equals("phases")) {
            if (reset) {
                e.phaseStats().reset();
                return new Answer("RESET", null, List.of());
            }
            List<List<String>> rows = new ArrayList<>();
            for (PhaseStats.Summary x : e.phaseStats().summaries())
                rows.add(List.of(x.phase(), Long.toString(x.count()), fmt(x.meanMs()), fmt(x.p50Ms()), fmt(x.p99Ms())));
            return new Answer("SHOW", List.of("phase", "count", "mean_ms", "p50_ms", "p99_ms"), rows);
        }
        if (reset) return null;   // RESET wanrep.sites means nothing: PostgreSQL answers it
        if (what.equals("certification"))   // interactive blocks certified at this site since it started (every site decides alike)
            return new Answer("SHOW", List.of("site", "certified_commits", "certification_aborts", "aborts_of_own_clients"),
                    List.of(List.of(ctx.site(), Long.toString(e.certifiedCommits()), Long.toString(e.certificationAborts()),
                            Long.toString(e.ownCertificationAborts()))));
        String state = e.failure() != null ? "stopped" : e.current() ? "serving" : "not current";
        var view = e.view();
        List<List<String>> rows = new ArrayList<>();
        rows.add(List.of(ctx.site(), state, Long.toString(e.lastGsn()), Integer.toString(e.pending()),
                view == null ? "" : String.join(",", view.members())));
        // then every other site's backlog as it last reported it (flow control holds new updates while one is over the limit)
        var flow = e.flowControl();
        long now = System.nanoTime();
        flow.reports().forEach((member, r) -> {
            if (r.site().equals(ctx.site())) return;
            String over = flow.maxBacklog() > 0 && r.backlog() > flow.maxBacklog() ? ", over flow.max_backlog" : "";
            rows.add(List.of(r.site(), "reported " + (now - r.atNanos()) / 1_000_000 + " ms ago" + over, "", Integer.toString(r.backlog()), ""));
        });
        return new Answer("SHOW", List.of("site", "state", "last_gsn", "pending", "members"), rows);
    }

    static boolean matches(String sql) {
        if (ISOLATE.matcher(sql).matches()) return true;
        Matcher m = COMMAND.matcher(sql);
        return m.matches() && !(m.group(1).equalsIgnoreCase("reset") && !m.group(2).equalsIgnoreCase("phases"));
    }

    private static String fmt(double v) { return String.format(Locale.ROOT, "%.3f", v); }
}
