package org.wanrep.plot;

import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.CombinedDomainXYPlot;
import org.jfree.chart.plot.IntervalMarker;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.ui.Layer;
import org.jfree.chart.ui.RectangleAnchor;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;
import org.wanrep.checker.Txn;

import java.awt.Color;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** history-check's timeline: ok transactions per second and their mean latency per site, fault intervals shaded. */
public final class TimelineChart {
    private TimelineChart() {}

    static { System.setProperty("java.awt.headless", "true"); }

    private static final Color[] PALETTE = {new Color(0x1f77b4), new Color(0xff7f0e), new Color(0x2ca02c), new Color(0x9467bd),
            new Color(0x8c564b), new Color(0xe377c2), new Color(0x7f7f7f), new Color(0xbcbd22), new Color(0x17becf)};

    /** A fault interval in nanoseconds from the run's start; {@code endNanos} &lt; 0: until the end. */
    public interface Interval {
        String kind();

        String site();

        long startNanos();

        long endNanos();
    }

    /** Transactions of processes below {@code excludeFrom} (the workload's clients), bucketed by completion second. */
    public static Path write(List<Txn> txns, int excludeFrom, List<? extends Interval> faults, int seconds, Path png) throws IOException {
        Map<String, long[]> count = new TreeMap<>();
        Map<String, double[]> latency = new TreeMap<>();
        int buckets = seconds + 2;
        for (Txn t : txns) {
            if (t.process() >= excludeFrom || !t.ok()) continue;
            int sec = (int) (t.completeTime() / 1_000_000_000L);
            if (sec < 0 || sec >= buckets) continue;
            String site = String.valueOf(t.node());
            count.computeIfAbsent(site, k -> new long[buckets])[sec]++;
            latency.computeIfAbsent(site, k -> new double[buckets])[sec] += (t.completeTime() - t.invokeTime()) / 1e6;
        }
        XYSeriesCollection tps = new XYSeriesCollection();
        XYSeriesCollection lat = new XYSeriesCollection();
        for (String site : count.keySet()) {
            XYSeries a = new XYSeries(site), l = new XYSeries(site);
            long[] c = count.get(site);
            double[] ms = latency.get(site);
            for (int i = 0; i < buckets; i++) {
                a.add(i + 0.5, c[i]);
                if (c[i] > 0) l.add(i + 0.5, ms[i] / c[i]);
            }
            tps.addSeries(a);
            lat.addSeries(l);
        }
        NumberAxis time = new NumberAxis("seconds since the workload started");
        CombinedDomainXYPlot plot = new CombinedDomainXYPlot(time);
        XYLineAndShapeRenderer rt = new XYLineAndShapeRenderer(true, false), rl = new XYLineAndShapeRenderer(true, false);
        for (int i = 0; i < count.size(); i++) {   // one colour per site in both panels, one legend
            rt.setSeriesPaint(i, PALETTE[i % PALETTE.length]);
            rl.setSeriesPaint(i, PALETTE[i % PALETTE.length]);
        }
        rl.setDefaultSeriesVisibleInLegend(false);
        XYPlot top = new XYPlot(tps, null, new NumberAxis("ok transactions / s"), rt);
        XYPlot bottom = new XYPlot(lat, null, new NumberAxis("mean latency of ok (ms)"), rl);
        shade(List.of(top, bottom), faults, seconds);
        plot.add(top, 3);
        plot.add(bottom, 2);
        JFreeChart chart = new JFreeChart("history-check: ok transactions per site (faults shaded)", JFreeChart.DEFAULT_TITLE_FONT, plot, true);
        Files.createDirectories(png.toAbsolutePath().getParent());
        ChartUtils.saveChartAsPNG(png.toFile(), chart, 1100, 650);
        return png;
    }

    /** Shades each interval in every plot, labelled in the first. */
    private static void shade(List<XYPlot> plots, List<? extends Interval> faults, double seconds) {
        for (Interval f : faults) {
            double start = f.startNanos() / 1e9;
            double end = f.endNanos() < 0 ? seconds : Math.max(f.endNanos() / 1e9, start + 0.2);
            for (XYPlot p : plots) {
                IntervalMarker m = new IntervalMarker(start, end, new Color(255, 80, 80, 50));
                if (p == plots.get(0)) {
                    m.setLabel(f.kind() + " " + f.site());
                    m.setLabelAnchor(RectangleAnchor.TOP_LEFT);
                    m.setLabelTextAnchor(TextAnchor.TOP_LEFT);
                }
                p.addDomainMarker(m, Layer.BACKGROUND);
            }
        }
    }

    /**
     * Counts per site in buckets of {@code bucketMs} milliseconds, drawn as a rate per second, with the
     * intervals shaded (pause-bench's acknowledged updates).
     */
    public static Path writeRates(String title, String what, Map<String, long[]> perSite, int bucketMs, List<? extends Interval> faults, Path png) throws IOException {
        XYSeriesCollection rates = new XYSeriesCollection();
        double seconds = 0;
        for (var e : perSite.entrySet()) {
            XYSeries s = new XYSeries(e.getKey());
            long[] c = e.getValue();
            for (int i = 0; i < c.length; i++) s.add((i + 0.5) * bucketMs / 1000.0, c[i] * 1000.0 / bucketMs);
            rates.addSeries(s);
            seconds = Math.max(seconds, c.length * bucketMs / 1000.0);
        }
        XYLineAndShapeRenderer r = new XYLineAndShapeRenderer(true, false);
        for (int i = 0; i < perSite.size(); i++) r.setSeriesPaint(i, PALETTE[i % PALETTE.length]);
        XYPlot plot = new XYPlot(rates, new NumberAxis("seconds since the load started"), new NumberAxis(what), r);
        shade(List.of(plot), faults, seconds);
        JFreeChart chart = new JFreeChart(title, JFreeChart.DEFAULT_TITLE_FONT, plot, true);
        Files.createDirectories(png.toAbsolutePath().getParent());
        ChartUtils.saveChartAsPNG(png.toFile(), chart, 1100, 500);
        return png;
    }
}
