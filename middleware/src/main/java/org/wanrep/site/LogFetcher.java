package org.wanrep.site;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.wanrep.config.Config;
import org.wanrep.gcs.GcsView;
import org.wanrep.txn.OrderedLog;
import org.wanrep.txn.ReplicationEngine;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;

/**
 * Catch-up transport: a site that rejoins fetches the ordered requests it missed from another member's
 * ordered-request log through that site's proxy ({@code SHOW wanrep.log FROM a TO b LIMIT n}, answered by
 * the proxy itself, for the replica's own user only), trying the view's other sites in configured order.
 */
final class LogFetcher implements ReplicationEngine.CatchUpSource {
    private static final Logger LOG = LoggerFactory.getLogger(LogFetcher.class);

    private final Config cluster;
    private final String self;

    LogFetcher(Config cluster, String self) {
        this.cluster = cluster;
        this.self = self;
    }

    @Override public List<OrderedLog.Entry> fetch(GcsView v, long from, long to, int max) throws Exception {
        Exception last = null;
        for (String s : Site.sites(cluster)) {
            if (s.equals(self) || !v.sites().contains(s)) continue;
            try {
                List<OrderedLog.Entry> es = fetchFrom(s, from, to, max);
                LOG.debug("site {}: GSN {} to {}: {} log entries from {}", self, from, to, es.size(), s);
                return es;
            } catch (Exception e) {
                LOG.warn("site {}: cannot fetch GSN {} to {} from {}: {}", self, from, to, s, e.getMessage());
                last = e;
            }
        }
        throw new IllegalStateException("no serving site could send GSN " + from + " to " + to
                + (last == null ? "" : " (last: " + last.getMessage() + ")"));
    }

    /**
     * Where another site's {@code key} (a listening address) is reached from here: a wildcard or loopback
     * address there means that site's host, whose address its group member has ({@code gcs.host}).
     */
    static String reachable(Config site, String key) {
        String h = site.get(key);
        boolean local = h == null || h.isBlank() || h.equals("0.0.0.0") || h.equals("::") || h.equals("*") || h.equals("localhost")
                || h.startsWith("127.") || h.equals("::1");
        return local ? site.get("gcs.host") : h;
    }

    private List<OrderedLog.Entry> fetchFrom(String donor, long from, long to, int max) throws Exception {
        Config d = cluster.forSite(donor), mine = cluster.forSite(self);
        String host = reachable(d, "proxy.host");
        Properties p = new Properties();
        p.setProperty("user", mine.get("postgres.user"));
        String pw = mine.get("postgres.password");
        if (pw != null && !pw.isEmpty()) p.setProperty("password", pw);
        p.setProperty("preferQueryMode", "simple");
        p.setProperty("connectTimeout", "10");
        p.setProperty("socketTimeout", "60");
        p.setProperty("ApplicationName", "wanrep-catch-up-" + self);
        List<OrderedLog.Entry> out = new ArrayList<>();
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://" + host + ":" + d.getInt("proxy.port") + "/postgres", p);
             Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SHOW wanrep.log FROM " + from + " TO " + to + " LIMIT " + max)) {
            while (rs.next()) {
                long gsn = Long.parseLong(rs.getString(2));
                if (rs.getString(1).equals("v")) out.add(new OrderedLog.Entry(gsn, null, 0, null, List.copyOf(Arrays.asList(rs.getString(5).split(",")))));
                else out.add(new OrderedLog.Entry(gsn, rs.getString(3), Long.parseLong(rs.getString(4)), java.util.HexFormat.of().parseHex(rs.getString(5)), null));
            }
        }
        return out;
    }
}
