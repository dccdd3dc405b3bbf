package org.wanrep.frontend;

import org.wanrep.txn.PhaseStats;
import org.wanrep.txn.ReplicationEngine;
import org.wanrep.wire.Messages;
import org.wanrep.wire.WireMessage;

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

    /** Catch-up: a site that rejoins fetches what it missed from this site's ordered-request log. */
    private static final Pattern LOG_RANGE = Pattern.compile("(?is)\\s*show\\s+wanrep\\.log\\s+from\\s+(\\d+)\\s+to\\s+(\\d+)\\s+limit\\s+(\\d+)\\s*;?\\s*");

    /** State transfer: snapshots of this replica at a GSN for pg_dump, and their release. */
    private static final Pattern SNAPSHOT = Pattern.compile("(?is)\\s*show\\s+wanrep\\.snapshot\\s*(?:release\\s+([0-9a-f-]+)|at\\s+(\\d+))?\\s*;?\\s*");

    private static final Pattern ISOLATE = Pattern.compile("(?is)\\s*set\\s+wanrep\\.partitioned_from\\s*(=|to)\\s*'([A-Za-z0-9_,\\- ]*)'\\s*;?\\s*");

    /** The answer to {@code sql} if it is one of our commands, else null (nothing is done). */
    static Answer answer(String sql, SiteContext ctx) { return answer(sql, ctx, null); }

    /** As {@link #answer(String, SiteContext)} for a session authenticated as {@code user}. */
    /** Membership: orders the addition or removal of one site through the total order (the replica's user only). */
    private static final Pattern SITES_CHANGE = Pattern.compile("(?is)\\s*show\\s+wanrep\\.sites\\s+(add|remove)\\s+([A-Za-z0-9_\\-]+)\\s*;?\\s*");

    static Answer answer(String sql, SiteContext ctx, String user) {
        // every command of ours names a wanrep. setting: any other text (nearly every one) is PostgreSQL's, without a regex
        if (!org.wanrep.sql.SqlText.containsIgnoreCase(sql, "wanrep.")) return null;
        Matcher sc = SITES_CHANGE.matcher(sql);
        if (sc.matches()) return changeSites(ctx, user, sc.group(1).equalsIgnoreCase("add"), sc.group(2));
        Matcher lr = LOG_RANGE.matcher(sql);
        if (lr.matches()) return logRange(ctx, user, Long.parseLong(lr.group(1)), Long.parseLong(lr.group(2)), Integer.parseInt(lr.group(3)));
        Matcher sn = SNAPSHOT.matcher(sql);
        if (sn.matches()) return snapshot(ctx, user, sn.group(1), sn.group(2));
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
            return new Answer("SHOW", List.of("site", "certified_commits", "certification_aborts", "aborts_of_own_clients",
                    "write_sets_applied", "logs_replayed"),
                    List.of(List.of(ctx.site(), Long.toString(e.certifiedCommits()), Long.toString(e.certificationAborts()),
                            Long.toString(e.ownCertificationAborts()), Long.toString(e.certifiedWriteSetsApplied()), Long.toString(e.certifiedLogsReplayed()))));
        // current() first: it ends the drain after a catch-up, which else only a client's request would (a site
        // without clients showed "catching-up (lag 0)" for ever, and cluster check left its replica out)
        boolean current = e.current();
        String state = e.failure() != null ? "stopped" : e.catchingUp() ? "catching-up (lag " + e.catchUpLag() + ")"
                : current ? "serving" : e.acceptedView() == null ? "joining" : "not current";
        var view = e.view();
        List<List<String>> rows = new ArrayList<>();
        rows.add(List.of(ctx.site(), state, Long.toString(e.lastGsn()), Integer.toString(e.pending()),
                view == null ? "" : String.join(",", view.members())));
        // then every other site's backlog as it last reported it (flow control holds new updates while one is over the limit)
        var flow = e.flowControl();
        long now = System.nanoTime();
        flow.reports().forEach((member, r) -> {
            if (r.site().equals(ctx.site())) return;
            String limit = flow.over(r), over = limit.isEmpty() ? "" : ", over " + limit;
            rows.add(List.of(r.site(), "reported " + (now - r.atNanos()) / 1_000_000 + " ms ago" + over, "", Integer.toString(r.backlog()), ""));
        });
        return new Answer("SHOW", List.of("site", "state", "last_gsn", "pending", "members"), rows);
    }

    /**
     * Rows (kind 'o' ordered or 'v' view, GSN, sending member, its message number, payload in hex or the
     * view's members) of this site's log; only for the replica's own user (the log holds every database's
     * requests). An error row-less answer is an exception, which the session turns into an ERROR.
     */
    private static Answer logRange(SiteContext ctx, String user, long from, long to, int max) {
        if (user == null || !user.equals(ctx.backend().user()))
            throw new IllegalArgumentException("permission denied: only " + ctx.backend().user() + " may read wanrep.log");
        var log = ctx.engine().orderedLog();
        List<org.wanrep.txn.OrderedLog.Entry> es;
        try {
            es = log == null ? null : log.range(from, to, Math.max(1, max), java.time.Duration.ofSeconds(20));
        } catch (InterruptedException x) {
            Thread.currentThread().interrupt();
            es = null;
        }
        if (es == null) throw new IllegalStateException("site " + ctx.site() + " does not hold GSN " + from + " to " + to + " in its log");
        List<List<String>> rows = new ArrayList<>();
        for (var x : es) {
            if (x.isView()) rows.add(List.of("v", Long.toString(x.gsn()), "", "", String.join(",", x.members())));
            else rows.add(List.of("o", Long.toString(x.gsn()), x.sender(), Long.toString(x.seq()), java.util.HexFormat.of().formatHex(x.payload())));
        }
        return new Answer("SHOW", List.of("kind", "gsn", "sender", "seq", "data"), rows);
    }

    /** Rows (token, GSN, database, snapshot id) of snapshots exported at one GSN, or the release of a token's. */
    private static Answer snapshot(SiteContext ctx, String user, String release, String at) {
        if (user == null || !user.equals(ctx.backend().user()))
            throw new IllegalArgumentException("permission denied: only " + ctx.backend().user() + " may take wanrep snapshots");
        if (release != null)
            return new Answer("SHOW", List.of("released"), List.of(List.of(Boolean.toString(org.wanrep.exec.SnapshotExport.release(release)))));
        if (at != null) {
            // write-set policies: the snapshots this site prepared when the joiner's view was installed, at its first GSN - 1
            if (ctx.engine().failure() != null)
                throw new IllegalStateException("site " + ctx.site() + " is not following the others just now: no snapshot from it");
            org.wanrep.exec.SnapshotExport.Export x;
            try {
                long gsn = Long.parseLong(at);
                // a site that joined in the same view prepared nothing: the joiner asks the next one at once
                x = gsn > 0 && ctx.engine().catchingUp() ? org.wanrep.exec.SnapshotExport.prepared(ctx.engine(), ctx.backend(), gsn, java.time.Duration.ZERO)
                        : org.wanrep.exec.SnapshotExport.prepared(ctx.engine(), ctx.backend(), gsn, java.time.Duration.ofSeconds(60));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                x = null;
            } catch (Exception e) {
                throw new IllegalStateException("site " + ctx.site() + " could not export snapshots: " + e);
            }
            if (x == null) throw new IllegalStateException("site " + ctx.site() + " has no snapshot prepared at GSN " + at);
            return snapshotRows(x);
        }
        // any GSN will do (the joiner catches up from there), but from a replica that follows the others in order
        var engine = ctx.engine();
        if (engine.failure() != null || engine.catchingUp() || engine.acceptedView() == null)
            throw new IllegalStateException("site " + ctx.site() + " is not following the others just now: no snapshot from it");
        org.wanrep.exec.SnapshotExport.Export x;
        try {
            x = org.wanrep.exec.SnapshotExport.export(ctx.engine(), ctx.backend(), java.time.Duration.ofSeconds(60));
        } catch (Exception e) {
            throw new IllegalStateException("site " + ctx.site() + " could not export snapshots: " + e);
        }
        return snapshotRows(x);
    }

    private static Answer snapshotRows(org.wanrep.exec.SnapshotExport.Export x) {
        List<List<String>> rows = new ArrayList<>();
        for (var s : x.snapshots()) rows.add(List.of(x.token(), Long.toString(x.gsn()), s.database(), s.id(), s.sequences() == null ? "" : s.sequences()));
        return new Answer("SHOW", List.of("token", "gsn", "database", "snapshot", "sequences"), rows);
    }

    /**
     * Orders the change and answers once this site delivered it (the configured sites it then has, and the
     * GSN); the change is refused here if it does not add or remove exactly one site of the current set.
     */
    private static Answer changeSites(SiteContext ctx, String user, boolean add, String site) {
        if (user == null || !user.equals(ctx.backend().user()))
            throw new IllegalArgumentException("permission denied: only " + ctx.backend().user() + " may add or remove sites");
        // a new site takes a state transfer (and, under symmetric execution, catches up); a donor hands out only a
        // copy at a GSN a majority holds, which under agreed delivery it may have to wait for; under write-set
        // policies every site switches the sites its executors are chosen from at the change's GSN
        org.wanrep.gcs.Gcs gcs = ctx.engine().gcs();
        List<String> next = new ArrayList<>(gcs.sites());
        if (add ? next.contains(site) : !next.remove(site))
            throw new IllegalStateException("site " + site + (add ? " is already" : " is not") + " one of the configured sites " + gcs.sites());
        if (add) next.add(site);
        if (next.isEmpty()) throw new IllegalStateException("the last site cannot be removed");
        // nothing runs for it: the request only gives the change a GSN in every site's engine and log
        org.wanrep.txn.TxnRequest r = new org.wanrep.txn.TxnRequest(new org.wanrep.txn.RequestId(ctx.site(), -System.nanoTime()),
                org.wanrep.txn.TxnRequest.Kind.SITES, org.wanrep.lock.TableSet.allTables(), "postgres", List.of(), System.currentTimeMillis(), 0);
        try {
            gcs.changeSites(next, org.wanrep.txn.TxnRequestCodec.encode(r));
        } catch (IllegalArgumentException | org.wanrep.gcs.NotPrimaryException e) {   // e.g. two sites at once; a minority
            throw new IllegalStateException(e.getMessage(), e);
        }
        long until = System.nanoTime() + 60_000_000_000L;
        while (!new java.util.HashSet<>(gcs.sites()).equals(new java.util.HashSet<>(next))) {
            if (System.nanoTime() > until) throw new IllegalStateException("the change to " + next + " was not delivered here within 60 s");
            try { Thread.sleep(10); } catch (InterruptedException e) { Thread.currentThread().interrupt(); throw new IllegalStateException("interrupted"); }
        }
        return new Answer("SHOW", List.of("sites"), List.of(List.of(String.join(",", gcs.sites()))));
    }

    static boolean matches(String sql) {
        if (SITES_CHANGE.matcher(sql).matches() || ISOLATE.matcher(sql).matches() || LOG_RANGE.matcher(sql).matches() || SNAPSHOT.matcher(sql).matches()) return true;
        Matcher m = COMMAND.matcher(sql);
        return m.matches() && !(m.group(1).equalsIgnoreCase("reset") && !m.group(2).equalsIgnoreCase("phases"));
    }

    /** A refused command: not the replica user (42501), or not possible at this site now (55000). */
    static org.wanrep.wire.PgError refusal(RuntimeException e) {
        return org.wanrep.wire.PgError.error(e instanceof IllegalArgumentException ? "42501" : "55000", e.getMessage());
    }

    /** A simple Query's answer: RowDescription and DataRows if it has columns, CommandComplete, ReadyForQuery({@code status}). */
    static List<WireMessage> queryReplies(Answer a, char status) {
        List<WireMessage> out = new ArrayList<>();
        if (a.columns() != null) {
            out.add(Messages.rowDescription(a.columns()));
            for (List<String> row : a.rows()) out.add(Messages.dataRow(row));
        }
        out.add(Messages.commandComplete(a.tag()));
        out.add(Messages.readyForQuery(status));
        return out;
    }

    /**
     * The command an extended-protocol request runs, if it is one of ours on the unnamed statement and portal (as
     * pgjdbc sends them: Parse, Bind, Describe, Execute, Sync), else null.
     */
    static String extendedCommand(List<WireMessage> unit) {
        String text = null;
        for (WireMessage m : unit) {
            if (m.kind() == 'P') {
                if (!matches(Messages.parseQuery(m)) || !Messages.parseName(m).isEmpty()) return null;
                text = Messages.parseQuery(m);
            } else if (m.kind() == 'B' && !Messages.bindNames(m)[1].isEmpty()) return null;
            else if (m.kind() != 'B' && m.kind() != 'D' && m.kind() != 'E' && m.kind() != 'S') return null;
        }
        return text;
    }

    /** The answer to {@link #extendedCommand}'s request, message by message. */
    static List<WireMessage> extendedReplies(List<WireMessage> unit, Answer a, char status) {
        List<WireMessage> out = new ArrayList<>();
        for (WireMessage m : unit) {
            switch (m.kind()) {
                case 'P' -> out.add(WireMessage.of('1', new byte[0]));
                case 'B' -> out.add(WireMessage.of('2', new byte[0]));
                case 'D' -> {
                    if (Messages.describeTarget(m).isStatement()) out.add(new org.wanrep.wire.PayloadWriter().int16(0).message('t'));
                    out.add(a.columns() == null ? WireMessage.of('n', new byte[0]) : Messages.rowDescription(a.columns()));
                }
                case 'E' -> {
                    for (List<String> row : a.rows()) out.add(Messages.dataRow(row));
                    out.add(Messages.commandComplete(a.tag()));
                }
                case 'S' -> out.add(Messages.readyForQuery(status));
                default -> { }
            }
        }
        return out;
    }

    private static String fmt(double v) { return String.format(Locale.ROOT, "%.3f", v); }
}
