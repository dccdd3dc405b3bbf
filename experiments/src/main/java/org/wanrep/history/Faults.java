package org.wanrep.history;

import org.wanrep.cluster.ClusterLayout;
import org.wanrep.pg.LocalPostgres;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.Set;

/**
 * Faults on a schedule drawn from the seed, acting on the cluster's real processes: kill -9 a site's middleware
 * ({@code crash}), kill -9 the middleware of the site that orders messages ({@code sequencer-crash}), SIGSTOP then
 * SIGCONT a middleware ({@code pause}), kill -9 a replica's PostgreSQL postmaster ({@code pg-crash}). A site whose
 * middleware was killed starts again 2-5 s later (a new process that rejoins: it catches up from the others' logs or takes
 * a state transfer, and resolves what its last incarnation left prepared), unless the run is near its end; one whose
 * PostgreSQL was killed stays down. No fault ever leaves fewer than a majority of sites running and unpaused.
 * {@code partition} isolates a site inside its JGroups stack (every site drops what it receives from the other side, as a
 * network partition would: {@code SET wanrep.partitioned_from}, which the cluster allows with {@code testing.fault_injection = on}) for 3-12 s,
 * then heals; one isolated long enough to be excluded stops when it finds it missed transactions, so it counts as down.
 */
public final class Faults implements Runnable {
    enum Kind {
        CRASH, SEQUENCER_CRASH, PARTITION, PAUSE, PG_CRASH;

        String label() { return name().toLowerCase(Locale.ROOT).replace('_', '-'); }
    }

    /** One injected fault; {@code endNanos} is -1 for a permanent one (the site stays down). */
    record Fault(String kind, String site, long startNanos, long endNanos, String note) implements org.wanrep.plot.TimelineChart.Interval {}

    static final String KINDS = "none|crash|sequencer-crash|partition|pause|pg-crash|all";

    /** The kinds a --faults value asks for. */
    static List<Kind> parse(String spec) {
        List<Kind> out = new ArrayList<>();
        for (String s : spec.split(",")) {
            s = s.trim().toLowerCase(Locale.ROOT);
            switch (s) {
                case "none", "" -> { }
                case "all" -> out.addAll(List.of(Kind.values()));
                default -> {
                    try {
                        out.add(Kind.valueOf(s.toUpperCase(Locale.ROOT).replace('-', '_')));
                    } catch (IllegalArgumentException e) {
                        throw new IllegalArgumentException("--faults: unknown fault '" + s + "' (" + KINDS + ")");
                    }
                }
            }
        }
        return out.stream().distinct().toList();
    }

    private final ClusterLayout layout;
    /** The cluster's directory, to start a killed site again (null: killed sites stay down). */
    private final Path clusterDir;
    /** Each site's current process (a restarted one has a new pid). */
    private final java.util.Map<String, ClusterLayout.SiteEntry> current = new java.util.concurrent.ConcurrentHashMap<>();
    private final List<Kind> kinds;
    private final Random rnd;
    private final long t0, from, until;
    private final PrintStream out;
    private final List<Fault> injected = Collections.synchronizedList(new ArrayList<>());
    private final Set<String> dead = Collections.synchronizedSet(new HashSet<>());
    private final Set<Long> paused = Collections.synchronizedSet(new HashSet<>());
    private final List<String> notes = Collections.synchronizedList(new ArrayList<>());

    /** Faults between {@code from} and {@code until} (System.nanoTime), times recorded relative to {@code t0}. */
    Faults(ClusterLayout layout, List<Kind> kinds, long seed, long t0, long from, long until, PrintStream out) {
        this(layout, null, kinds, seed, t0, from, until, out);
    }

    /** With {@code clusterDir}: a site whose middleware was killed starts again. */
    Faults(ClusterLayout layout, Path clusterDir, List<Kind> kinds, long seed, long t0, long from, long until, PrintStream out) {
        this.layout = layout;
        this.clusterDir = clusterDir;
        for (ClusterLayout.SiteEntry e : layout.sites()) current.put(e.name(), e);
        this.kinds = List.copyOf(kinds);
        this.rnd = new Random(seed * 0x9E3779B97F4A7C15L + 17);
        this.t0 = t0;
        this.from = from;
        this.until = until;
        this.out = out;
    }

    List<Fault> injected() { return List.copyOf(injected); }

    List<String> notes() { return List.copyOf(notes); }

    Set<String> dead() { return Set.copyOf(dead); }

    private int sites() { return layout.sites().size(); }

    /** Sites that may be down or paused at once with a majority still running. */
    private int tolerance() { return sites() - (sites() / 2 + 1); }

    private long rel() { return System.nanoTime() - t0; }

    @Override public void run() {
        if (kinds.isEmpty()) return;
        try {
            sleepUntil(from);
            // pauses first, so a permanent fault does not use up the tolerance before the others had a turn
            long half = from + (until - from) / 2;
            while (System.nanoTime() < until && !Thread.currentThread().isInterrupted()) {
                List<Kind> now = new ArrayList<>(kinds);
                if (System.nanoTime() < half && now.contains(Kind.PAUSE) && now.size() > 1) now.retainAll(List.of(Kind.PAUSE));
                Kind k = now.get(rnd.nextInt(now.size()));
                if (dead.size() + 1 > tolerance()) {
                    notes.add(String.format("t=%.1fs: no more faults: %d site(s) down, one more would leave no majority", rel() / 1e9, dead.size()));
                    out.println("history-check: " + notes.getLast());
                    return;
                }
                inject(k);
                sleepUntil(Math.min(until, System.nanoTime() + (long) ((1.5 + rnd.nextDouble() * 3) * 1e9)));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            resumeAll();
        }
    }

    private List<ClusterLayout.SiteEntry> alive() {
        return layout.sites().stream().filter(s -> !dead.contains(s.name())).map(s -> current.get(s.name())).toList();
    }

    private void inject(Kind k) throws InterruptedException {
        List<ClusterLayout.SiteEntry> alive = alive();
        ClusterLayout.SiteEntry target = switch (k) {
            // the configured sequencer is the first site; once it is gone the first member of the view orders,
            // which is the first surviving site in start order
            case SEQUENCER_CRASH -> alive.getFirst();
            default -> alive.get(rnd.nextInt(alive.size()));
        };
        long start = rel();
        switch (k) {
            case CRASH, SEQUENCER_CRASH -> {
                String note = kill(target.middleware_pid(), "KILL") ? "kill -9 middleware pid " + target.middleware_pid() : "middleware already gone";
                dead.add(target.name());
                long downMs = 2000 + rnd.nextInt(3000);
                if (clusterDir == null || System.nanoTime() + (downMs + 15_000) * 1_000_000L > until) {
                    record(new Fault(k.label(), target.name(), start, -1, note));
                    return;
                }
                out.printf("history-check: t=%.1fs fault %s %s (%s; starts again in %d ms)%n", start / 1e9, k.label(), target.name(), note, downMs);
                Thread.sleep(downMs);
                try {
                    ClusterLayout.SiteEntry again = org.wanrep.cluster.LocalCluster.startSite(clusterDir, target.name(), new PrintStream(java.io.OutputStream.nullOutputStream()));
                    current.put(target.name(), again);
                    dead.remove(target.name());
                    injected.add(new Fault(k.label(), target.name(), start, rel(), note + "; started again after " + downMs + " ms (pid " + again.middleware_pid() + ")"));
                    out.printf("history-check: t=%.1fs %s started again (pid %d)%n", rel() / 1e9, target.name(), again.middleware_pid());
                } catch (Exception e) {
                    // e.g. it refuses to start (its replica cannot follow): it stays down, and the run says why
                    injected.add(new Fault(k.label(), target.name(), start, -1, note + "; could not start again: " + e.getMessage()));
                    notes.add(String.format("t=%.1fs: %s could not start again: %s", rel() / 1e9, target.name(), e.getMessage()));
                    out.println("history-check: " + notes.getLast());
                }
            }
            case PG_CRASH -> {
                long pid = postmasterPid(target);
                String note = pid > 0 && kill(pid, "KILL") ? "kill -9 postmaster pid " + pid : "postmaster not found";
                dead.add(target.name());
                record(new Fault(k.label(), target.name(), start, -1, note));
            }
            case PAUSE -> {
                long pid = target.middleware_pid();
                long ms = 2000 + rnd.nextInt(4000);
                ms = Math.max(500, Math.min(ms, (until - System.nanoTime()) / 1_000_000));
                out.printf("history-check: t=%.1fs fault pause %s (SIGSTOP middleware pid %d for %d ms)%n", start / 1e9, target.name(), pid, ms);
                paused.add(pid);
                kill(pid, "STOP");
                try {
                    Thread.sleep(ms);
                } finally {
                    kill(pid, "CONT");
                    paused.remove(pid);
                }
                injected.add(new Fault(k.label(), target.name(), start, rel(), "SIGSTOP/SIGCONT middleware pid " + pid + " for " + ms + " ms"));
            }
            case PARTITION -> {
                long ms = 3000 + rnd.nextInt(9000);
                ms = Math.max(500, Math.min(ms, (until - System.nanoTime()) / 1_000_000));
                out.printf("history-check: t=%.1fs fault partition %s (cut off from the others inside the JGroups stacks for %d ms)%n", start / 1e9, target.name(), ms);
                dead.add(target.name());   // excluded meanwhile, it stops for good when it finds what it missed
                String note = partition(target, true) ? "cut off for " + ms + " ms" : "could not cut it off (a proxy did not answer)";
                try {
                    Thread.sleep(ms);
                } finally {
                    partition(target, false);
                }
                injected.add(new Fault(k.label(), target.name(), start, rel(), note));
            }
        }
    }

    private void record(Fault f) {
        injected.add(f);
        out.printf("history-check: t=%.1fs fault %s %s (%s)%n", f.startNanos() / 1e9, f.kind(), f.site(), f.note());
    }

    /**
     * Cuts {@code target} off from the other sites, both ways, or heals: each site drops what it receives from
     * the other side (SET wanrep.partitioned_from through its proxy; fault injection must be on).
     */
    private boolean partition(ClusterLayout.SiteEntry target, boolean on) { return partition(layout, target, on); }

    /** As above, in any local cluster (pause-bench's partition fault). */
    public static boolean partition(ClusterLayout layout, ClusterLayout.SiteEntry target, boolean on) {
        boolean all = true;
        List<String> others = layout.sites().stream().map(ClusterLayout.SiteEntry::name).filter(n -> !n.equals(target.name())).toList();
        for (ClusterLayout.SiteEntry s : layout.sites()) {
            String from = !on ? "" : s.name().equals(target.name()) ? String.join(",", others) : target.name();
            all &= setPartition(s, from);
        }
        return all;
    }

    private static boolean setPartition(ClusterLayout.SiteEntry s, String from) {
        java.util.Properties p = new java.util.Properties();
        p.setProperty("user", "postgres");
        p.setProperty("connectTimeout", "5");
        p.setProperty("socketTimeout", "10");
        p.setProperty("preferQueryMode", "simple");
        String url = "jdbc:postgresql://" + s.proxy_host() + ":" + s.proxy_port() + "/postgres";
        try (java.sql.Connection c = java.sql.DriverManager.getConnection(url, p); java.sql.Statement st = c.createStatement()) {
            st.execute("SET wanrep.partitioned_from = '" + from + "'");
            return true;
        } catch (java.sql.SQLException e) {
            return false;
        }
    }

    /** SIGCONT to anything still stopped (an interrupted pause). */
    void resumeAll() {
        for (Long pid : List.copyOf(paused)) {
            kill(pid, "CONT");
            paused.remove(pid);
        }
    }

    static long postmasterPid(ClusterLayout.SiteEntry s) { return LocalPostgres.postmasterPid(Path.of(s.data_dir())); }

    /** Sends a signal with kill(1): the processes are real, possibly not our children (PostgreSQL). */
    public static boolean kill(long pid, String signal) {
        try {
            Process p = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            return p.waitFor() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static void sleepUntil(long nanos) throws InterruptedException {
        long ms = (nanos - System.nanoTime()) / 1_000_000;
        if (ms > 0) Thread.sleep(ms);
    }
}
