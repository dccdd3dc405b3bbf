package org.wanrep.checker;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import static org.wanrep.checker.DependencyGraph.*;

/**
 * An Elle-style checker for list-append histories (Kingsbury &amp; Alvaro, "Elle: inferring isolation anomalies from
 * experimental observations", VLDB 2020), written for wanrep because Elle itself is not reachable here.
 * <p>
 * Appended values are unique, so every element of a read list names the transaction that appended it, and each
 * key's version order is the longest list read of it (every other read must be a prefix of it, else
 * "incompatible-order"). From that order it derives the dependencies between transactions that may have committed
 * (ok and info): ww (successive appends in a key's order), wr (a read observes the append of the last element it
 * saw), rw (a read that saw a prefix did not see the next append), plus each client process's order and,
 * optionally, real-time order. A cycle is an anomaly; Tarjan's algorithm finds the strongly connected components,
 * then a BFS inside each finds the shortest cycles of each class: G0 (ww only), G1c (ww and wr), G-single (exactly
 * one rw), G2 (two or more rw). Reads alone show G1a (a failed transaction's append observed), G1b (a read ends on an
 * append its writer followed with another append to the same key), duplicates, values nobody appended, and lost
 * appends (acknowledged but missing from a read of their key invoked after they completed).
 * Transactions with unknown outcome (info) may or may not have committed: their appends may be seen, their reads are
 * not used.
 */
public final class ListAppendChecker {
    /**
     * @param processOrder  add each process's order of transactions as edges (session order)
     * @param realtime      add real-time order (a transaction completed before another was invoked) as edges
     * @param maxExamples   examples kept per anomaly type (all are counted)
     * @param searchBudget  BFS node visits allowed per component for the G-single search
     */
    public record Options(boolean processOrder, boolean realtime, int maxExamples, long searchBudget) {
        public static Options defaults() { return new Options(true, false, 20, 20_000_000L); }

        public Options withRealtime(boolean on) { return new Options(processOrder, on, maxExamples, searchBudget); }
    }

    private final Options options;

    public ListAppendChecker() { this(Options.defaults()); }

    public ListAppendChecker(Options options) { this.options = options; }

    public CheckResult check(History history) { return check(history.transactions()); }

    public CheckResult check(List<Txn> txns) { return new Run(txns).run(); }

    /** What is known about one key. */
    private static final class KeyInfo {
        final long key;
        final HashMap<Long, Integer> writer = new HashMap<>();
        final HashSet<Long> nonFinal = new HashSet<>(); // appends followed by another append of the same txn to this key
        final List<int[]> reads = new ArrayList<>();    // {txn index, op index} of ok reads
        long[] order = new long[0];                      // the version order: the longest read, duplicates dropped
        int orderReader = -1;
        HashMap<Long, Integer> pos = new HashMap<>();

        KeyInfo(long key) { this.key = key; }

        int writerOf(long v) { return writer.getOrDefault(v, -1); }
    }

    private final class Run {
        final Txn[] t;
        final Map<Long, KeyInfo> keys = new HashMap<>();
        final Map<String, Long> counts = new TreeMap<>();
        final Map<String, List<Anomaly>> examples = new TreeMap<>();
        final long startNanos = System.nanoTime();
        DependencyGraph g;
        boolean truncated;
        int nontrivial;

        Run(List<Txn> txns) { t = txns.toArray(new Txn[0]); }

        CheckResult run() {
            indexWrites();
            checkReads();
            long[] lostAndUnchecked = checkLost();
            buildGraph();
            findCycles();
            int ok = 0, failed = 0, unknown = 0;
            long acked = 0;
            for (Txn x : t) {
                switch (x.outcome()) {
                    case OK -> ok++;
                    case FAIL -> failed++;
                    default -> unknown++;
                }
                if (x.ok()) for (MicroOp o : x.ops()) if (o.isAppend()) acked++;
            }
            List<Anomaly> all = new ArrayList<>();
            examples.values().forEach(all::addAll);
            return new CheckResult(t.length, ok, failed, unknown, acked, lostAndUnchecked[1], counts, all, nontrivial,
                    truncated, (System.nanoTime() - startNanos) / 1_000_000);
        }

        KeyInfo key(long k) { return keys.computeIfAbsent(k, KeyInfo::new); }

        void report(String type, List<Integer> txnIdx, String description, List<String> steps) {
            counts.merge(type, 1L, Long::sum);
            List<Anomaly> l = examples.computeIfAbsent(type, x -> new ArrayList<>());
            if (l.size() >= options.maxExamples()) return;
            List<Long> ids = new ArrayList<>();
            List<String> shown = new ArrayList<>();
            for (int i : txnIdx) {
                ids.add(t[i].id());
                String s = show(i);
                if (!shown.contains(s)) shown.add(s);
            }
            l.add(new Anomaly(type, ids, description, steps, shown));
        }

        String show(int i) {
            Txn x = t[i];
            StringBuilder b = new StringBuilder("T").append(x.id()).append(' ').append(x.outcome().json())
                    .append(" process ").append(x.process());
            if (x.node() != null) b.append(" at ").append(x.node());
            b.append(':');
            for (MicroOp o : x.ops()) {
                b.append(' ');
                if (o.isAppend()) b.append("[append ").append(o.key()).append(' ').append(o.value()).append(']');
                else b.append("[r ").append(o.key()).append(' ').append(o.read() == null ? "?" : tail(o.read())).append(']');
            }
            return b.toString();
        }

        String name(int i) { return "T" + t[i].id(); }

        void indexWrites() {
            for (int i = 0; i < t.length; i++) {
                Map<Long, Long> lastByKey = new HashMap<>();
                for (MicroOp o : t[i].ops()) {
                    if (!o.isAppend()) continue;
                    KeyInfo ki = key(o.key());
                    Integer prevWriter = ki.writer.putIfAbsent(o.value(), i);
                    if (prevWriter != null)
                        report("duplicate-append", List.of(prevWriter, i), "Value " + o.value() + " was appended to key " + o.key()
                                + " twice, by " + name(prevWriter) + " and " + name(i) + "; appended values must be unique, the history cannot be checked for this value.", List.of());
                    Long before = lastByKey.put(o.key(), o.value());
                    if (before != null) ki.nonFinal.add(before);
                }
                if (t[i].ok()) {
                    List<MicroOp> ops = t[i].ops();
                    for (int j = 0; j < ops.size(); j++)
                        if (ops.get(j).isRead() && ops.get(j).read() != null) key(ops.get(j).key()).reads.add(new int[]{i, j});
                }
            }
        }

        long[] readOf(int[] r) { return t[r[0]].ops().get(r[1]).read(); }

        void checkReads() {
            for (KeyInfo ki : keys.values()) {
                long[] longest = null;
                int[] longestRead = null;
                for (int[] r : ki.reads) {
                    long[] l = readOf(r);
                    if (longest == null || l.length > longest.length
                            || (l.length == longest.length && t[r[0]].invokeSeq() > t[longestRead[0]].invokeSeq())) {
                        longest = l;
                        longestRead = r;
                    }
                }
                if (longest == null) continue;
                ki.orderReader = longestRead[0];
                checkElements(ki, longestRead);
                // the version order: the longest read without repeated elements
                LinkedHashSet<Long> seen = new LinkedHashSet<>();
                for (long v : longest) seen.add(v);
                ki.order = seen.stream().mapToLong(Long::longValue).toArray();
                for (int i = 0; i < ki.order.length; i++) ki.pos.put(ki.order[i], i);
                for (int[] r : ki.reads) {
                    long[] l = readOf(r);
                    if (!isPrefix(l, longest)) {
                        report("incompatible-order", List.of(r[0], longestRead[0]), "Key " + ki.key + ": " + name(r[0]) + " read "
                                + tail(l) + " and " + name(longestRead[0]) + " read " + tail(longest)
                                + "; neither is a prefix of the other, so the key has no single order of appends (divergent replicas or a non-atomic append).",
                                List.of("first difference at position " + firstDifference(l, longest)));
                        checkElements(ki, r);
                    }
                    checkIntermediate(ki, r);
                }
            }
        }

        /** Duplicates, values nobody appended, and values appended by failed transactions (G1a) in one read. */
        void checkElements(KeyInfo ki, int[] r) {
            long[] l = readOf(r);
            int reader = r[0];
            HashSet<Long> seen = new HashSet<>(l.length * 2);
            for (long v : l) {
                if (!seen.add(v)) {
                    report("duplicate-elements", List.of(reader), name(reader) + " read key " + ki.key + " = " + tail(l)
                            + ", in which " + v + " appears more than once (it was appended once).", List.of());
                    break;
                }
            }
            for (long v : l) {
                int w = ki.writerOf(v);
                if (w < 0) {
                    report("garbage-read", List.of(reader), name(reader) + " read key " + ki.key + " and saw " + v
                            + ", a value no transaction appended to it.", List.of());
                } else if (t[w].outcome() == OpType.FAIL) {
                    report("G1a", List.of(w, reader), "Aborted read: " + name(reader) + " read key " + ki.key + " and saw " + v
                            + ", appended by " + name(w) + " which failed" + (t[w].error() != null ? " (" + t[w].error() + ")" : "") + ".",
                            List.of(name(w) + " appended " + v + " to key " + ki.key + " and failed",
                                    name(reader) + " committed a read of key " + ki.key + " ending " + tail(l)));
                }
            }
        }

        /** G1b: the read's last element written by another transaction is not that transaction's final append to the key. */
        void checkIntermediate(KeyInfo ki, int[] r) {
            long[] l = readOf(r);
            int reader = r[0];
            int j = l.length;
            while (j > 0 && ki.writerOf(l[j - 1]) == reader) j--;
            if (j == 0) return;
            long v = l[j - 1];
            int w = ki.writerOf(v);
            if (w < 0 || w == reader || !ki.nonFinal.contains(v) || t[w].outcome() == OpType.FAIL) return;
            report("G1b", List.of(w, reader), "Intermediate read: " + name(reader) + " read key " + ki.key + " ending " + tail(Arrays.copyOf(l, j))
                    + ", but " + name(w) + " appended " + v + " and then more to key " + ki.key + " in the same transaction; a reader must see all of them or none.",
                    List.of(name(w) + ": " + t[w].ops().stream().filter(o -> o.isAppend() && o.key() == ki.key).map(Object::toString).toList(),
                            name(reader) + " saw " + v + " but not the rest"));
        }

        /** Lost: an ok append absent from the key's longest read although that read was invoked after the append completed. */
        long[] checkLost() {
            long unchecked = 0;
            for (KeyInfo ki : keys.values()) {
                for (Map.Entry<Long, Integer> e : ki.writer.entrySet()) {
                    int w = e.getValue();
                    if (!t[w].ok()) continue;
                    if (ki.orderReader < 0 || t[ki.orderReader].invokeSeq() < t[w].completeSeq()) {
                        if (!ki.pos.containsKey(e.getKey())) unchecked++;
                        continue;
                    }
                    if (ki.pos.containsKey(e.getKey())) continue;
                    int reader = ki.orderReader;
                    report("lost", List.of(w, reader), name(w) + " appended " + e.getKey() + " to key " + ki.key
                            + " and was acknowledged (ok), but " + name(reader) + ", invoked after that, read key " + ki.key + " = "
                            + tail(ki.order) + " without it.", List.of());
                }
            }
            return new long[]{0, unchecked};
        }

        void buildGraph() {
            DependencyGraph.Builder b = new DependencyGraph.Builder(t.length);
            for (KeyInfo ki : keys.values()) {
                int prev = -1;
                for (long v : ki.order) {
                    int w = ki.writerOf(v);
                    if (w < 0 || !t[w].maybeCommitted()) { prev = -1; continue; }
                    if (prev >= 0) b.add(prev, w, WW);
                    prev = w;
                }
                for (int[] r : ki.reads) {
                    long[] l = readOf(r);
                    int reader = r[0];
                    if (!isPrefix(l, ki.order)) continue; // incompatible (reported): its position in the order is unknown
                    int j = l.length;
                    while (j > 0 && ki.writerOf(l[j - 1]) == reader) j--;
                    if (j > 0) {
                        int w = ki.writerOf(l[j - 1]);
                        if (w >= 0 && t[w].maybeCommitted()) b.add(w, reader, WR);
                    }
                    if (l.length < ki.order.length) {
                        int next = ki.writerOf(ki.order[l.length]);
                        if (next >= 0 && t[next].maybeCommitted()) b.add(reader, next, RW);
                    }
                }
            }
            if (options.processOrder()) {
                Map<Integer, Integer> last = new HashMap<>();
                Integer[] byInvoke = new Integer[t.length];
                for (int i = 0; i < t.length; i++) byInvoke[i] = i;
                Arrays.sort(byInvoke, (x, y) -> Long.compare(t[x].invokeSeq(), t[y].invokeSeq()));
                for (int i : byInvoke) {
                    if (!t[i].maybeCommitted()) continue;
                    Integer p = last.put(t[i].process(), i);
                    if (p != null) b.add(p, i, PROCESS);
                }
            }
            if (options.realtime()) addRealtime(b);
            g = b.build();
        }

        /** Real-time edges, transitively reduced as Elle does: each invocation links from the frontier of latest completions. */
        void addRealtime(DependencyGraph.Builder b) {
            List<long[]> ev = new ArrayList<>();
            for (int i = 0; i < t.length; i++) {
                if (!t[i].maybeCommitted()) continue;
                ev.add(new long[]{t[i].invokeSeq(), i, 0});
                if (t[i].ok()) ev.add(new long[]{t[i].completeSeq(), i, 1});
            }
            ev.sort((x, y) -> Long.compare(x[0], y[0]));
            LinkedHashSet<Integer> frontier = new LinkedHashSet<>();
            int[][] preds = new int[t.length][];
            for (long[] e : ev) {
                int i = (int) e[1];
                if (e[2] == 0) {
                    preds[i] = frontier.stream().mapToInt(Integer::intValue).toArray();
                    for (int p : preds[i]) b.add(p, i, REALTIME);
                } else {
                    for (int p : preds[i]) frontier.remove(p);
                    frontier.add(i);
                }
            }
        }

        void findCycles() {
            int[] nodes = java.util.stream.IntStream.range(0, t.length).filter(i -> t[i].maybeCommitted()).toArray();
            List<int[]> sccs = g.components(nodes, ALL);
            nontrivial = sccs.size();
            for (int[] scc : sccs) {
                Set<String> found = new HashSet<>();
                search(scc, DATA, found);
                if (found.isEmpty()) search(scc, ALL, found);
                if (found.isEmpty()) // cannot happen: a component always holds a cycle; say so rather than hide it
                    report("cycle", Arrays.stream(scc).boxed().toList(), "A dependency cycle among " + scc.length
                            + " transactions that the search could not isolate.", List.of());
            }
        }

        void search(int[] scc, int allowed, Set<String> found) {
            int order = allowed & ORDER;
            // G0: a cycle of write-write edges
            for (int[] c : g.components(scc, WW | order)) {
                cycleThrough(c, WW | order, WW | order, found);
                break;
            }
            // G1c: a cycle of ww and wr edges holding at least one wr
            for (int[] c : g.components(scc, WW | WR | order)) {
                if (cycleThrough(c, WR, WW | WR | order, found)) break;
            }
            if ((allowed & RW) == 0) return;
            // G-single: an rw edge a -> b closed by a path b .. a without rw edges
            int tag = g.tag(scc);
            long budget = g.work + options.searchBudget();
            boolean single = false;
            for (int a : scc) {
                for (int e = g.firstEdge(a); e < g.endEdge(a) && !single; e++) {
                    int b = g.target(e);
                    if ((g.edgeBits(e) & RW) == 0 || !g.in(b, tag)) continue;
                    if (g.work > budget) { truncated = true; break; }
                    int[] p = g.path(b, a, WW | WR | order, tag);
                    if (p != null) single = reportCycle(a, p, RW, WW | WR | order, found);
                }
                if (single || g.work > budget) break;
            }
            if (single) return;
            // G2: a cycle through an rw edge, any edges allowed (with no G-single found, it holds two rw or more)
            tag = g.tag(scc);
            for (int a : scc) {
                for (int e = g.firstEdge(a); e < g.endEdge(a); e++) {
                    int b = g.target(e);
                    if ((g.edgeBits(e) & RW) == 0 || !g.in(b, tag)) continue;
                    int[] p = g.path(b, a, allowed, tag);
                    if (p != null) { reportCycle(a, p, RW, allowed, found); return; }
                }
            }
        }

        /** Finds an edge with {@code first} bits inside component c and the shortest cycle through it over {@code mask}. */
        boolean cycleThrough(int[] c, int first, int mask, Set<String> found) {
            int tag = g.tag(c);
            for (int a : c) {
                for (int e = g.firstEdge(a); e < g.endEdge(a); e++) {
                    int b = g.target(e);
                    if ((g.edgeBits(e) & first & mask) == 0 || !g.in(b, tag)) continue;
                    int[] p = g.path(b, a, mask, tag);
                    if (p != null) return reportCycle(a, p, g.edgeBits(e) & first, mask, found);
                }
            }
            return false;
        }

        /**
         * Reports the cycle a -> p[0] .. p[last] (= a): the first edge counted as one of {@code firstBits}, each other as
         * its least severe dependency among {@code mask}. Returns whether it was reported (one cycle per class per component).
         */
        boolean reportCycle(int a, int[] p, int firstBits, int mask, Set<String> found) {
            int k = p.length; // cycle nodes: a, p[0], ..., p[k-2]; p[k-1] == a
            int[] cyc = new int[k];
            cyc[0] = a;
            System.arraycopy(p, 0, cyc, 1, k - 1);
            int[] types = new int[k];
            int ww = 0, wr = 0, rw = 0, proc = 0, rt = 0;
            for (int i = 0; i < k; i++) {
                int from = cyc[i], to = cyc[(i + 1) % k];
                int bits = (i == 0 ? firstBits : g.bits(from, to)) & mask;
                int type = (bits & WW) != 0 ? WW : (bits & WR) != 0 ? WR : (bits & PROCESS) != 0 ? PROCESS : (bits & REALTIME) != 0 ? REALTIME : RW;
                types[i] = type;
                switch (type) {
                    case WW -> ww++;
                    case WR -> wr++;
                    case RW -> rw++;
                    case PROCESS -> proc++;
                    default -> rt++;
                }
            }
            String base = rw == 0 ? (wr == 0 ? "G0" : "G1c") : rw == 1 ? "G-single" : "G2";
            String type = base + (rt > 0 ? "-realtime" : proc > 0 ? "-process" : "");
            if (!found.add(base)) return true;
            List<String> steps = new ArrayList<>();
            List<Integer> ids = new ArrayList<>();
            for (int i = 0; i < k; i++) {
                ids.add(cyc[i]);
                steps.add(explain(cyc[i], cyc[(i + 1) % k], types[i]));
            }
            StringBuilder d = new StringBuilder(describe(base)).append(" Cycle of ").append(k).append(" transactions: ");
            for (int i = 0; i < k; i++) d.append(name(cyc[i])).append(" -").append(label(types[i])).append("-> ");
            d.append(name(cyc[0])).append('.');
            report(type, ids, d.toString(), steps);
            return true;
        }

        String describe(String base) {
            return switch (base) {
                case "G0" -> "G0 (write cycle): the transactions' appends are ordered one way on one key and the other way on another.";
                case "G1c" -> "G1c (circular information flow): each transaction saw or overwrote another's effects in a cycle, without anti-dependencies.";
                case "G-single" -> "G-single (read skew): a cycle with exactly one anti-dependency (a read that missed a write it should have seen).";
                default -> "G2-item (anti-dependency cycle, e.g. write skew): a cycle with two or more anti-dependencies.";
            };
        }

        String label(int type) {
            return switch (type) {
                case WW -> "ww";
                case WR -> "wr";
                case RW -> "rw";
                case PROCESS -> "process";
                default -> "realtime";
            };
        }

        /** Puts one edge in words, finding the key and values that witness it. */
        String explain(int a, int b, int type) {
            switch (type) {
                case WW -> {
                    for (MicroOp o : t[a].ops()) {
                        if (!o.isAppend()) continue;
                        KeyInfo ki = keys.get(o.key());
                        Integer p = ki.pos.get(o.value());
                        if (p != null && p + 1 < ki.order.length && ki.writerOf(ki.order[p + 1]) == b)
                            return name(a) + " appended " + o.value() + " to key " + o.key() + ", then " + name(b) + " appended "
                                    + ki.order[p + 1] + " right after it (ww)";
                    }
                }
                case WR -> {
                    for (MicroOp o : t[b].ops()) {
                        if (!o.isRead() || o.read() == null) continue;
                        KeyInfo ki = keys.get(o.key());
                        long[] l = o.read();
                        int j = l.length;
                        while (j > 0 && ki.writerOf(l[j - 1]) == b) j--;
                        if (j > 0 && ki.writerOf(l[j - 1]) == a)
                            return name(b) + " read key " + o.key() + " = " + tail(l) + ", seeing " + name(a) + "'s append of " + l[j - 1] + " (wr)";
                    }
                }
                case RW -> {
                    for (MicroOp o : t[a].ops()) {
                        if (!o.isRead() || o.read() == null) continue;
                        KeyInfo ki = keys.get(o.key());
                        long[] l = o.read();
                        if (l.length < ki.order.length && ki.writerOf(ki.order[l.length]) == b && isPrefix(l, ki.order))
                            return name(a) + " read key " + o.key() + " = " + tail(l) + ", which misses " + name(b) + "'s append of "
                                    + ki.order[l.length] + ", the next in key " + o.key() + "'s order (rw)";
                    }
                }
                case PROCESS -> {
                    return name(a) + " ran before " + name(b) + " in the same client process " + t[a].process() + " (process)";
                }
                default -> {
                    return name(a) + " completed before " + name(b) + " was invoked (realtime)";
                }
            }
            return name(a) + " -" + label(type) + "-> " + name(b);
        }
    }

    static boolean isPrefix(long[] p, long[] l) {
        if (p.length > l.length) return false;
        return Arrays.equals(p, 0, p.length, l, 0, p.length);
    }

    static int firstDifference(long[] a, long[] b) {
        int i = Arrays.mismatch(a, b);
        return i < 0 ? Math.min(a.length, b.length) : i;
    }

    /** A list, shortened to its last elements when long. */
    static String tail(long[] l) {
        if (l.length <= 8) return Arrays.toString(l);
        StringBuilder b = new StringBuilder("[… ").append(l.length - 6).append(" more, ");
        for (int i = l.length - 6; i < l.length; i++) b.append(l[i]).append(i + 1 < l.length ? ", " : "]");
        return b.toString();
    }
}
