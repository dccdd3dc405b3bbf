package org.wanrep.experiments;

import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.title.TextTitle;
import org.jfree.data.category.DefaultCategoryDataset;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;
import org.wanrep.experiments.Experiment.Axis;
import org.wanrep.experiments.Experiment.Breakdown;
import org.wanrep.experiments.Experiment.Curve;
import org.wanrep.experiments.Experiment.Deliveries;
import org.wanrep.experiments.Experiment.Lines;
import org.wanrep.experiments.Experiment.Overlap;
import org.wanrep.experiments.Experiment.Panel;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Optional;

/** One PNG per panel, mirroring the study's figures; saturated points are left out, as in the study. */
public final class ExperimentCharts {
    private ExperimentCharts() {}

    static { System.setProperty("java.awt.headless", "true"); }

    /** Writes {@code DIR/PANEL.png}; returns its path. */
    public static Path panel(Results r, Panel p, Path dir) throws IOException {
        Path png = dir.resolve(p.id() + ".png");
        JFreeChart chart = switch (p) {
            case Lines l -> lines(r, l);
            case Breakdown b -> breakdown(r, b);
            case Overlap o -> overlap(r, o);
            case Deliveries d -> deliveries(r, d);
        };
        chart.addSubtitle(new TextTitle(r.experiment().name() + " (" + r.experiment().variant() + "), " + r.experiment().matrix()
                + ", saturated points omitted"));
        Files.createDirectories(dir);
        ChartUtils.saveChartAsPNG(png.toFile(), chart, 1000, 560);
        return png;
    }

    private static JFreeChart lines(Results r, Lines l) {
        XYSeriesCollection ds = new XYSeriesCollection();
        for (Curve c : l.curves()) {
            XYSeries s = new XYSeries(c.label());
            r.values(c.label()).forEach(s::add);
            ds.addSeries(s);
        }
        String y = "response time " + l.metric().name().toLowerCase(Locale.ROOT) + " (ms)";
        JFreeChart chart = ChartFactory.createXYLineChart(l.title(), l.x() == Axis.LOAD ? "offered load (transactions/s, all sites)" : "number of sites", y, ds,
                PlotOrientation.VERTICAL, true, false, false);
        XYPlot plot = chart.getXYPlot();
        XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, true);
        plot.setRenderer(renderer);
        return chart;
    }

    private static JFreeChart breakdown(Results r, Breakdown b) {
        DefaultCategoryDataset ds = new DefaultCategoryDataset();
        int n = r.experiment().siteCounts().get(r.experiment().siteCounts().size() - 1);
        for (double load : b.loads())
            for (Experiment.Bar bar : b.bars()) {
                Optional<Derived.BarValues> v = Derived.bar(r, bar, n, load);
                String col = bar.label() + " @" + Finding.num(load);
                for (String part : Derived.BREAKDOWN_PARTS) ds.addValue(v.map(x -> x.parts().get(part)).orElse(0.0), part, col);
            }
        return ChartFactory.createStackedBarChart(b.title(), "configuration @ load (tps)", "mean ms", ds, PlotOrientation.VERTICAL, true, false, false);
    }

    private static JFreeChart overlap(Results r, Overlap o) {
        DefaultCategoryDataset ds = new DefaultCategoryDataset();
        int n = r.experiment().siteCounts().get(r.experiment().siteCounts().size() - 1);
        for (double load : r.experiment().loads())
            Derived.overlap(r, o.setup(), n, load).ifPresent(v -> {
                String col = Finding.num(load) + " (" + Finding.pct(v.fraction()) + ")";
                ds.addValue(v.executionMs(), "execution", col);
                ds.addValue(v.overlappedMs(), "overlapped with the ordering", col);
            });
        return ChartFactory.createBarChart(o.title(), "offered load (tps), overlapped share", "mean ms", ds, PlotOrientation.VERTICAL, true, false, false);
    }

    private static JFreeChart deliveries(Results r, Deliveries d) {
        XYSeriesCollection ds = new XYSeriesCollection();
        int n = r.experiment().siteCounts().get(r.experiment().siteCounts().size() - 1);
        for (String setup : d.setups())
            for (String phase : new String[]{"delivery", "optimistic_delivery"}) {
                XYSeries s = new XYSeries(setup + (phase.equals("delivery") ? " delivery" : " optimistic delivery"));
                for (double load : r.experiment().loads())
                    if (r.ok(setup, n, load)) Derived.phaseMean(r, setup, n, load, phase).ifPresent(v -> s.add(load, v));
                if (s.getItemCount() > 0) ds.addSeries(s);
            }
        JFreeChart chart = ChartFactory.createXYLineChart(d.title(), "offered load (transactions/s, all sites)", "mean ms from multicast", ds,
                PlotOrientation.VERTICAL, true, false, false);
        chart.getXYPlot().setRenderer(new XYLineAndShapeRenderer(true, true));
        return chart;
    }
}
