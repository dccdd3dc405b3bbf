package org.wanrep.gcs.bench;

import org.HdrHistogram.Histogram;
import org.wanrep.gcs.Delivery;
import org.wanrep.gcs.GcsListener;
import org.wanrep.gcs.GcsMessage;
import org.wanrep.gcs.jgroups.GcsSettings;
import org.wanrep.gcs.jgroups.JGroupsGcs;
import org.wanrep.gcs.wan.DeliveryBound;
import org.wanrep.gcs.wan.LatencyMatrix;

import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Group-communication benchmark: one member per site in this JVM over real JGroups TCP on loopback,
 * WAN delays emulated per link. Messages are sent open-loop at a fixed rate; every member stamps each
 * final (and optimistic) delivery with the shared monotonic clock, so latencies are exact. Reports
 * measured latency against the analytical delivery bound of the same messages.
 */
public final class GcsBench {

    public record Params(LatencyMatrix matrix, Delivery mode, String sender, double rate, int messages, int size,
                         int warmup, double jitterMs, Duration timeout) {}

    public record Result(String mode, int sites, int messages, double originP50, double originP99, double allP50,
                         double allP99, Double optP50, double boundOrigin, double boundAll, double boundOpt, double throughput,
                         double achievedSendRate, String matrix) {
        public Map<String, Object> json() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("mode", mode); m.put("sites", sites); m.put("messages", messages);
            m.put("origin_p50_ms", r(originP50)); m.put("origin_p99_ms", r(originP99));
            m.put("all_p50_ms", r(allP50)); m.put("all_p99_ms", r(allP99));
            m.put("opt_p50_ms", optP50 == null ? null : r(optP50));
            m.put("bound_origin_ms", r(boundOrigin)); m.put("bound_all_ms", r(boundAll));
            m.put("bound_opt_ms", optP50 == null ? null : r(boundOpt));
            m.put("throughput_msgs_per_s", r(throughput)); m.put("send_rate_msgs_per_s", r(achievedSendRate));
            m.put("latency_matrix", matrix);
            return m;
        }

        public String toJson() {
            StringBuilder b = new StringBuilder("{");
            for (var e : json().entrySet()) {
                if (b.length() > 1) b.append(',');
                b.append('"').append(e.getKey()).append("\":");
                Object v = e.getValue();
                b.append(v instanceof String s ? "\"" + s.replace("\"", "\\\"") + "\"" : String.valueOf(v));
            }
            return b.append('}').toString();
        }

        private static double r(double v) { return Math.round(v * 100) / 100.0; }
    }

    private final Params p;
    private final PrintStream out;
    private final List<String> sites;
    private final long[][] finalAt, optAt;      // [member][message] nanoTime, 0 = not yet
    private final AtomicInteger[] finalCount;
    private final int total;
    private final java.nio.file.Path secretFile;

    public GcsBench(Params p, PrintStream progress) {
        this(p, progress, null);
    }

    /** With {@code secretFile} non-null the members encrypt and authenticate their traffic with that key, as sites do with gcs.secret_file. */
    public GcsBench(Params p, PrintStream progress, java.nio.file.Path secretFile) {
        this.secretFile = secretFile;
        this.p = p;
        this.out = progress;
        this.sites = p.matrix().sites();
        this.total = p.warmup() + p.messages();
        this.finalAt = new long[sites.size()][total];
        this.optAt = new long[sites.size()][total];
        this.finalCount = new AtomicInteger[sites.size()];
        for (int i = 0; i < sites.size(); i++) finalCount[i] = new AtomicInteger();
        if (p.size() < 8) throw new IllegalArgumentException("--size must be at least 8 bytes");
        if (p.sender() != null) p.matrix().indexOf(p.sender());
    }

    public Result run() throws Exception {
        List<Integer> ports = GcsSettings.freePorts(sites.size());
        String cluster = "wanrep-bench-" + ProcessHandle.current().pid() + "-" + System.nanoTime() % 100000;
        List<JGroupsGcs> members = new ArrayList<>();
        try {
            out.printf("starting %d members (%s, %s%s)...%n", sites.size(), p.matrix().source(), p.mode().label(), secretFile != null ? ", encrypted" : "");
            for (int i = 0; i < sites.size(); i++) {
                final int me = i;
                GcsSettings s = GcsSettings.loopback(cluster, sites.get(i), sites, ports, p.matrix().isZero() ? null : p.matrix())
                        .withJitter(p.jitterMs()).withSecretFile(secretFile);
                members.add(JGroupsGcs.start(s, new GcsListener() {
                    @Override public void optimistic(GcsMessage m) { record(optAt[me], m, null); }
                    @Override public void ordered(GcsMessage m, long gsn) { record(finalAt[me], m, finalCount[me]); }
                }));
            }
            for (JGroupsGcs g : members) g.awaitPrimary(sites.size(), Duration.ofSeconds(60));
            long[] sentAt = new long[total];
            int[] senderOf = new int[total];
            out.printf("warming up with %d messages...%n", p.warmup());
            send(members, sentAt, senderOf, 0, p.warmup());
            awaitAll(p.warmup());
            out.printf("measuring %d messages at %.0f msgs/s...%n", p.messages(), p.rate());
            JGroupsGcs.SendStats[] before = new JGroupsGcs.SendStats[members.size()];
            for (int i = 0; i < members.size(); i++) before[i] = members.get(i).sendStats();
            long t0 = System.nanoTime();
            send(members, sentAt, senderOf, p.warmup(), total);
            long sendEnd = System.nanoTime();
            awaitAll(total);
            long frames = 0, protos = 0, wakeups = 0;
            for (int i = 0; i < members.size(); i++) {
                JGroupsGcs.SendStats st = members.get(i).sendStats();
                frames += st.frames() - before[i].frames();
                protos += st.messages() - before[i].messages();
                wakeups += st.tickerWakeups() - before[i].tickerWakeups();
            }
            out.printf(Locale.ROOT, "sent %d JGroups messages carrying %d total-order messages (%.2f and %.2f per measured message), ticker wake-ups %d (%.0f/s per member)%n",
                    frames, protos, (double) frames / p.messages(), (double) protos / p.messages(), wakeups,
                    wakeups / ((System.nanoTime() - t0) / 1e9) / members.size());
            return summarize(sentAt, senderOf, t0, sendEnd);
        } finally {
            for (JGroupsGcs g : members) g.close();
        }
    }

    private void record(long[] at, GcsMessage m, AtomicInteger count) {
        if (m.payload().length < 8) return;
        int idx = (int) ByteBuffer.wrap(m.payload()).getLong();
        if (idx < 0 || idx >= total) return;
        at[idx] = System.nanoTime();
        if (count != null) count.incrementAndGet();
    }

    private void send(List<JGroupsGcs> members, long[] sentAt, int[] senderOf, int from, int to) {
        long interval = (long) (1e9 / p.rate());
        long start = System.nanoTime();
        int fixed = p.sender() == null ? -1 : sites.indexOf(p.sender());
        long lastReport = start;
        for (int i = from; i < to; i++) {
            long due = start + (i - from) * interval;
            long now;
            while ((now = System.nanoTime()) < due) LockSupport.parkNanos(Math.min(due - now, 1_000_000));
            int s = fixed >= 0 ? fixed : i % members.size();
            byte[] payload = new byte[p.size()];
            ByteBuffer.wrap(payload).putLong(i);
            senderOf[i] = s;
            sentAt[i] = System.nanoTime();
            members.get(s).multicast(payload, p.mode());
            if (now - lastReport > 2_000_000_000L) {
                lastReport = now;
                out.printf("  sent %d/%d, delivered everywhere %d%n", i - from, to - from, minDelivered() - from);
            }
        }
    }

    private int minDelivered() {
        int m = Integer.MAX_VALUE;
        for (AtomicInteger c : finalCount) m = Math.min(m, c.get());
        return m;
    }

    private void awaitAll(int n) throws InterruptedException {
        long end = System.nanoTime() + p.timeout().toNanos();
        while (minDelivered() < n) {
            if (System.nanoTime() > end)
                throw new IllegalStateException("only " + minDelivered() + " of " + n + " messages delivered everywhere after " + p.timeout());
            Thread.sleep(5);
        }
    }

    private Result summarize(long[] sentAt, int[] senderOf, long t0, long sendEnd) {
        Histogram origin = new Histogram(3), all = new Histogram(3), opt = new Histogram(3);
        String seqSite = sites.get(0);
        DeliveryBound bound = new DeliveryBound(p.matrix(), seqSite);
        double boundOrigin = 0, boundAll = 0, boundOpt = 0;
        long lastDelivery = 0;
        for (int i = p.warmup(); i < total; i++) {
            int s = senderOf[i];
            origin.recordValue(micros(finalAt[s][i] - sentAt[i]));
            long lastFinal = 0, lastOpt = 0;
            for (int r = 0; r < sites.size(); r++) {
                lastFinal = Math.max(lastFinal, finalAt[r][i]);
                lastOpt = Math.max(lastOpt, optAt[r][i]);
            }
            all.recordValue(micros(lastFinal - sentAt[i]));
            if (p.mode() == Delivery.OPT_SAFE) opt.recordValue(micros(lastOpt - sentAt[i]));
            lastDelivery = Math.max(lastDelivery, lastFinal);
            boundOrigin += bound.fin(p.mode(), s, s);
            boundAll += bound.finAll(p.mode(), s);
            boundOpt += p.matrix().maxFrom(sites.get(s));
        }
        int n = p.messages();
        double secs = (lastDelivery - t0) / 1e9;
        return new Result(p.mode().label(), sites.size(), n,
                ms(origin.getValueAtPercentile(50)), ms(origin.getValueAtPercentile(99)),
                ms(all.getValueAtPercentile(50)), ms(all.getValueAtPercentile(99)),
                p.mode() == Delivery.OPT_SAFE ? ms(opt.getValueAtPercentile(50)) : null,
                boundOrigin / n, boundAll / n, boundOpt / n, n / secs, n / ((sendEnd - t0) / 1e9), p.matrix().source());
    }

    private static long micros(long nanos) { return Math.max(0, nanos / 1000); }
    private static double ms(long micros) { return micros / 1000.0; }

    /** A readable table of one or more results. */
    public static String table(List<Result> rs) {
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "%-9s %5s %8s %10s %10s %10s %10s %10s %10s %10s %12s%n", "mode", "sites", "msgs",
                "origin p50", "origin p99", "bound org", "all p50", "bound all", "opt p50", "org/bound", "msgs/s"));
        for (Result r : rs) {
            b.append(String.format(Locale.ROOT, "%-9s %5d %8d %10.2f %10.2f %10.2f %10.2f %10.2f %10s %10s %12.0f%n", r.mode(), r.sites(),
                    r.messages(), r.originP50(), r.originP99(), r.boundOrigin(), r.allP50(), r.boundAll(),
                    r.optP50() == null ? "-" : String.format(Locale.ROOT, "%.2f", r.optP50()),
                    r.boundOrigin() > 0 ? String.format(Locale.ROOT, "%.2f", r.originP50() / r.boundOrigin()) : "-",
                    r.throughput()));
        }
        b.append("(latencies in ms; bound = analytical delivery bound of DESIGN.md section 3 for the same messages)").append('\n');
        return b.toString();
    }

}
