package org.wanrep.checker;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The dependency graph in compressed sparse rows: nodes are transaction indexes, each (from, to) pair has one edge
 * whose {@code bits} say which dependencies it stands for. Strongly connected components by an iterative Tarjan
 * (no recursion: components can hold 100,000 nodes), shortest paths by BFS, both restricted to a node set and to
 * edges carrying some of the given bits.
 */
final class DependencyGraph {
    static final int WW = 1, WR = 2, RW = 4, PROCESS = 8, REALTIME = 16;
    static final int DATA = WW | WR | RW, ORDER = PROCESS | REALTIME, ALL = DATA | ORDER;

    final int n;
    private final int[] start;
    private final int[] dst;
    private final byte[] bits;
    // scratch arrays indexed by node, reused across calls (tags/stamps avoid clearing them)
    private final int[] setTag;
    private final int[] local;
    private final int[] visited;
    private final int[] prev;
    private final int[] queue;
    private int tagGen, stampGen;
    long work; // nodes visited by BFS, for the search budget

    /** Builds from edges encoded by {@link Builder}. */
    private DependencyGraph(int n, long[] enc, int size) {
        this.n = n;
        Arrays.sort(enc, 0, size);
        int[] tmpDst = new int[size];
        byte[] tmpBits = new byte[size];
        start = new int[n + 1];
        int m = 0;
        long lastPair = -1;
        for (int i = 0; i < size; i++) {
            long pair = enc[i] >>> 3;
            int type = (int) (enc[i] & 7);
            if (pair != lastPair) {
                int from = (int) (pair >>> 30);
                tmpDst[m] = (int) (pair & ((1 << 30) - 1));
                start[from + 1]++;
                m++;
                lastPair = pair;
            }
            tmpBits[m - 1] |= (byte) (1 << type);
        }
        for (int i = 0; i < n; i++) start[i + 1] += start[i];
        dst = Arrays.copyOf(tmpDst, m);
        bits = Arrays.copyOf(tmpBits, m);
        setTag = new int[n];
        local = new int[n];
        visited = new int[n];
        prev = new int[n];
        queue = new int[n];
    }

    static final class Builder {
        private final int n;
        private long[] enc = new long[1024];
        private int size;

        Builder(int n) {
            if (n >= (1 << 30)) throw new IllegalArgumentException("too many transactions: " + n);
            this.n = n;
        }

        void add(int from, int to, int bit) {
            if (from == to) return;
            if (size == enc.length) enc = Arrays.copyOf(enc, size * 2);
            enc[size++] = ((((long) from << 30) | to) << 3) | Integer.numberOfTrailingZeros(bit);
        }

        DependencyGraph build() { return new DependencyGraph(n, enc, size); }
    }

    int edges() { return dst.length; }

    /** The dependency bits of edge from -> to, 0 if none. */
    int bits(int from, int to) {
        for (int e = start[from]; e < start[from + 1]; e++) if (dst[e] == to) return bits[e];
        return 0;
    }

    /** Edges of node v: indexes into {@link #target}/{@link #edgeBits}. */
    int firstEdge(int v) { return start[v]; }

    int endEdge(int v) { return start[v + 1]; }

    int target(int e) { return dst[e]; }

    int edgeBits(int e) { return bits[e]; }

    /** Marks a node set; {@link #in} tests membership until the next call. */
    int tag(int[] nodes) {
        int t = ++tagGen;
        for (int v : nodes) setTag[v] = t;
        return t;
    }

    boolean in(int v, int tag) { return setTag[v] == tag; }

    /** The strongly connected components with more than one node, among {@code nodes}, over edges with {@code mask} bits. */
    List<int[]> components(int[] nodes, int mask) {
        int tag = tag(nodes);
        int m = nodes.length;
        for (int i = 0; i < m; i++) local[nodes[i]] = i;
        int[] index = new int[m], low = new int[m], stack = new int[m], call = new int[m], edgePos = new int[m];
        boolean[] onStack = new boolean[m];
        Arrays.fill(index, -1);
        List<int[]> out = new ArrayList<>();
        int counter = 0, sp = 0;
        for (int root = 0; root < m; root++) {
            if (index[root] != -1) continue;
            int cp = 0;
            index[root] = low[root] = counter++;
            stack[sp++] = root;
            onStack[root] = true;
            call[cp] = root;
            edgePos[cp++] = start[nodes[root]];
            while (cp > 0) {
                int v = call[cp - 1];
                int g = nodes[v];
                int e = edgePos[cp - 1];
                if (e < start[g + 1]) {
                    edgePos[cp - 1]++;
                    if ((bits[e] & mask) == 0 || setTag[dst[e]] != tag) continue;
                    int w = local[dst[e]];
                    if (index[w] == -1) {
                        index[w] = low[w] = counter++;
                        stack[sp++] = w;
                        onStack[w] = true;
                        call[cp] = w;
                        edgePos[cp++] = start[dst[e]];
                    } else if (onStack[w]) {
                        low[v] = Math.min(low[v], index[w]);
                    }
                } else {
                    cp--;
                    if (cp > 0) {
                        int parent = call[cp - 1];
                        low[parent] = Math.min(low[parent], low[v]);
                    }
                    if (low[v] == index[v]) {
                        int size = 0;
                        int i = sp;
                        do { i--; size++; } while (stack[i] != v);
                        if (size > 1) {
                            int[] comp = new int[size];
                            for (int j = 0; j < size; j++) comp[j] = nodes[stack[i + j]];
                            out.add(comp);
                        }
                        for (int j = i; j < sp; j++) onStack[stack[j]] = false;
                        sp = i;
                    }
                }
            }
        }
        return out;
    }

    /** A shortest path src .. dst (both included) inside the node set {@code tag}, over edges with {@code mask} bits; null if none. */
    int[] path(int src, int target, int mask, int tag) {
        int stamp = ++stampGen;
        int head = 0, tail = 0;
        queue[tail++] = src;
        visited[src] = stamp;
        prev[src] = -1;
        while (head < tail) {
            int v = queue[head++];
            work++;
            if (v == target) {
                int len = 0;
                for (int x = v; x != -1; x = prev[x]) len++;
                int[] p = new int[len];
                for (int x = v; x != -1; x = prev[x]) p[--len] = x;
                return p;
            }
            for (int e = start[v]; e < start[v + 1]; e++) {
                int w = dst[e];
                if ((bits[e] & mask) == 0 || setTag[w] != tag || visited[w] == stamp) continue;
                visited[w] = stamp;
                prev[w] = v;
                queue[tail++] = w;
            }
        }
        return null;
    }
}
