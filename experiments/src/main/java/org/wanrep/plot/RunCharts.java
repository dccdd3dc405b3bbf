package org.wanrep.plot;

import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.data.category.DefaultCategoryDataset;
import org.wanrep.emulator.report.PhaseRow;
import org.wanrep.emulator.report.RunResult;
import org.wanrep.emulator.report.SiteResult;
import org.wanrep.emulator.report.TypeResult;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** PNG charts of a run: response times per site and type, and the middleware's phases per site. */
public final class RunCharts {
    private RunCharts() {}

    static { System.setProperty("java.awt.headless", "true"); }

    /** Median and 90th percentile response time per site (and all sites) and transaction type. */
    public static Path responseTimes(RunResult r, Path png) throws IOException {
        DefaultCategoryDataset ds = new DefaultCategoryDataset();
        for (SiteResult s : r.rows())
            for (TypeResult t : s.types()) {
                ds.addValue(t.p50Ms(), t.type() + " p50", s.site());
                ds.addValue(t.p90Ms(), t.type() + " p90", s.site());
            }
        JFreeChart chart = ChartFactory.createBarChart("response time per site (" + r.settings().get("load") + ")", "site",
                "ms from the due time", ds, PlotOrientation.VERTICAL, true, false, false);
        return save(chart, png);
    }

    /** Mean time of each middleware phase of the updates each site originated; null when no site had phases. */
    public static Path phases(RunResult r, Path png) throws IOException {
        DefaultCategoryDataset ds = new DefaultCategoryDataset();
        for (SiteResult s : r.sites())
            for (PhaseRow p : s.phases())
                if (p.count() > 0) ds.addValue(p.meanMs(), p.phase(), s.site());
        if (ds.getRowCount() == 0) return null;
        JFreeChart chart = ChartFactory.createBarChart("where an update's time goes, per origin site (mean)", "site", "ms", ds,
                PlotOrientation.VERTICAL, true, false, false);
        return save(chart, png);
    }

    private static Path save(JFreeChart chart, Path png) throws IOException {
        Files.createDirectories(png.toAbsolutePath().getParent());
        ChartUtils.saveChartAsPNG(png.toFile(), chart, 1000, 520);
        return png;
    }

}
