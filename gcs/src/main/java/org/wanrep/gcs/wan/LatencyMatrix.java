package org.wanrep.gcs.wan;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One-way delays in milliseconds between sites, from a square CSV whose header row and first column
 * name the sites in the same order ({@code site,a,b / a,0,12 / b,12,0}). The first site is the
 * default sequencer. Presets ship as resources: {@code na4}, {@code na8}, {@code global5},
 * {@code ca-es-ch}, {@code lan}.
 */
public final class LatencyMatrix {
    public static final List<String> PRESETS = List.of("na4", "na8", "global5", "ca-es-ch", "lan");

    private final List<String> sites;
    private final double[][] ms;
    private final Map<String, Integer> index = new HashMap<>();
    private final String source;

    private LatencyMatrix(List<String> sites, double[][] ms, String source) {
        this.sites = List.copyOf(sites);
        this.ms = ms;
        this.source = source;
        for (int i = 0; i < sites.size(); i++) index.put(sites.get(i), i);
    }

    /** A preset name or a path to a CSV file. */
    public static LatencyMatrix load(String presetOrPath) {
        if (PRESETS.contains(presetOrPath)) {
            try (InputStream in = LatencyMatrix.class.getResourceAsStream("/wan/" + presetOrPath + ".csv")) {
                if (in == null) throw new IllegalStateException("preset " + presetOrPath + " missing from the classpath");
                return parse(new String(in.readAllBytes(), StandardCharsets.UTF_8), presetOrPath);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }
        Path p = Path.of(presetOrPath);
        if (!Files.isRegularFile(p))
            throw new IllegalArgumentException("latency matrix '" + presetOrPath + "' is neither a preset " + PRESETS + " nor a file");
        try {
            return parse(Files.readString(p), p.toString());
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read latency matrix " + p + ": " + e.getMessage(), e);
        }
    }

    public static LatencyMatrix parse(String csv, String source) {
        List<String[]> rows = new ArrayList<>();
        for (String line : csv.split("\\R")) {
            String t = line.strip();
            if (t.isEmpty() || t.startsWith("#")) continue;
            String[] cells = t.split(",", -1);
            for (int i = 0; i < cells.length; i++) cells[i] = cells[i].strip();
            rows.add(cells);
        }
        if (rows.size() < 2) throw new IllegalArgumentException(source + ": a latency matrix needs a header and at least one site");
        String[] header = rows.get(0);
        int n = header.length - 1;
        if (rows.size() - 1 != n)
            throw new IllegalArgumentException(source + ": header names " + n + " sites but there are " + (rows.size() - 1) + " rows");
        List<String> sites = new ArrayList<>();
        for (int i = 1; i <= n; i++) sites.add(header[i]);
        double[][] ms = new double[n][n];
        for (int r = 0; r < n; r++) {
            String[] row = rows.get(r + 1);
            if (row.length != n + 1) throw new IllegalArgumentException(source + ": row " + (r + 2) + " has " + (row.length - 1) + " values, expected " + n);
            if (!row[0].equals(sites.get(r)))
                throw new IllegalArgumentException(source + ": row " + (r + 2) + " is site '" + row[0] + "', expected '" + sites.get(r) + "' (same order as the header)");
            for (int c = 0; c < n; c++) {
                try {
                    ms[r][c] = Double.parseDouble(row[c + 1]);
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException(source + ": '" + row[c + 1] + "' at " + sites.get(r) + "->" + sites.get(c) + " is not a number");
                }
                if (ms[r][c] < 0) throw new IllegalArgumentException(source + ": negative delay at " + sites.get(r) + "->" + sites.get(c));
            }
        }
        return new LatencyMatrix(sites, ms, source);
    }

    /** A matrix of n sites, all delays zero (no emulation). */
    public static LatencyMatrix zero(List<String> sites) {
        return new LatencyMatrix(sites, new double[sites.size()][sites.size()], "none");
    }

    /** The first n sites. */
    public LatencyMatrix first(int n) {
        if (n < 1 || n > sites.size()) throw new IllegalArgumentException(source + " has " + sites.size() + " sites, cannot take " + n);
        double[][] m = new double[n][n];
        for (int i = 0; i < n; i++) System.arraycopy(ms[i], 0, m[i], 0, n);
        return new LatencyMatrix(sites.subList(0, n), m, source + "[first " + n + "]");
    }

    public List<String> sites() { return sites; }
    public String source() { return source; }
    public int indexOf(String site) {
        Integer i = index.get(site);
        if (i == null) throw new IllegalArgumentException("site '" + site + "' is not in latency matrix " + source + " " + sites);
        return i;
    }
    public boolean contains(String site) { return index.containsKey(site); }
    public double delay(int from, int to) { return ms[from][to]; }
    public double delay(String from, String to) { return ms[indexOf(from)][indexOf(to)]; }
    public boolean isZero() {
        for (double[] row : ms) for (double d : row) if (d != 0) return false;
        return true;
    }
    public double maxFrom(String from) {
        double m = 0;
        for (double d : ms[indexOf(from)]) m = Math.max(m, d);
        return m;
    }
}
