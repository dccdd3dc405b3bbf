package org.wanrep.emulator.report;

import java.util.List;
import java.util.Map;

/**
 * A whole run: the emulator settings, one result per site, the sites together ({@code allSites},
 * null with one site), and what the run ran against ({@code context}: cluster, delivery, checks).
 */
public record RunResult(Map<String, Object> settings, List<SiteResult> sites, SiteResult allSites, Map<String, Object> context) {
    /** Every site result and, with several sites, the combined one last. */
    public List<SiteResult> rows() {
        if (allSites == null) return sites;
        List<SiteResult> rs = new java.util.ArrayList<>(sites);
        rs.add(allSites);
        return rs;
    }

    public RunResult withContext(Map<String, Object> more) {
        Map<String, Object> c = new java.util.LinkedHashMap<>(context);
        c.putAll(more);
        return new RunResult(settings, sites, allSites, c);
    }
}
