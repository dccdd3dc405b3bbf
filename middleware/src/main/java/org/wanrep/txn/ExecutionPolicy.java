package org.wanrep.txn;

import org.wanrep.gcs.Members;

import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Which site executes an update transaction (configuration {@code execution}). Symmetric: every
 * site. Primary-copy: the primary site of the transaction's tables. Local-copy: the origin. Under
 * the two write-set policies the executing site ships the write set and the others apply it.
 *
 * <p>Every site must name the same executor for a transaction, so the choice is a pure function of
 * the request, the configuration and two views that all sites share: the view in which the
 * transaction was finally delivered and the current view (virtual synchrony gives every surviving
 * member the same of both). The preferred site executes if its member from the delivery view is
 * still there; otherwise the first configured site with a member that was in both views takes over
 * and re-executes (a joiner never does: it does not hold the transaction).
 */
public final class ExecutionPolicy {
    public enum Kind { SYMMETRIC, PRIMARY_COPY, LOCAL_COPY }

    private final Kind kind;
    private final List<String> sites;
    private final Map<String, String> primaries;

    /**
     * @param sites     the configured sites, in order (the first is also the fallback of first resort)
     * @param primaries configured primary site per table ({@code schema.table}); others are spread over
     *                  the sites by a hash of their name
     */
    public ExecutionPolicy(Kind kind, List<String> sites, Map<String, String> primaries) {
        this.kind = kind;
        this.sites = List.copyOf(sites);
        this.primaries = Map.copyOf(primaries);
        for (var e : primaries.entrySet())
            if (!sites.contains(e.getValue()))
                throw new IllegalArgumentException("tables." + e.getKey() + ".primary: '" + e.getValue() + "' is not one of the sites " + sites);
    }

    /**
     * The same policy over the sites a configuration change set (ordered: every site switches at its GSN). A
     * configured primary that is no longer a site gives its tables to the hash spread, alike everywhere.
     */
    public ExecutionPolicy withSites(List<String> newSites) {
        Map<String, String> kept = new java.util.HashMap<>(primaries);
        kept.values().removeIf(s -> !newSites.contains(s));
        return new ExecutionPolicy(kind, newSites, kept);
    }

    public static Kind kind(String configured) {
        return switch (configured) {
            case "symmetric" -> Kind.SYMMETRIC;
            case "primary-copy" -> Kind.PRIMARY_COPY;
            case "local-copy" -> Kind.LOCAL_COPY;
            default -> throw new IllegalArgumentException("execution: unknown policy '" + configured + "'");
        };
    }

    public Kind kind() { return kind; }

    /** Whether this request is executed at one site and shipped as a write set (not symmetric). */
    public boolean shipsWriteSet(TxnRequest r) { return kind != Kind.SYMMETRIC && r.shipsWriteSet(); }

    /** The primary site of a table (configured, else spread over the sites by its name). */
    public String primaryOf(String table) {
        String p = primaries.get(table);
        if (p != null) return p;
        return sites.get(Math.floorMod(table.toLowerCase(Locale.ROOT).hashCode(), sites.size()));
    }

    /**
     * The site that should execute {@code r}: the origin for local-copy; for primary-copy the site
     * that is primary of the most tables it writes, a tie going to the origin if it is among them
     * (a local write saves the write set's trip back), else to the tied site first in the configured
     * order; a transaction that locks every table, or writes none, goes to its origin.
     */
    public String preferredSite(TxnRequest r) {
        if (kind == Kind.LOCAL_COPY || r.tables().all() || r.tables().writes().isEmpty()) return r.id().site();
        java.util.Map<String, Integer> votes = new java.util.HashMap<>();
        for (String w : r.tables().writes()) votes.merge(primaryOf(w), 1, Integer::sum);
        return mostVoted(votes, r.id().site(), sites);
    }

    /** The rule above on counted votes (shared with the client emulator's labelling, which mirrors it). */
    static String mostVoted(java.util.Map<String, Integer> votes, String origin, List<String> siteOrder) {
        int max = java.util.Collections.max(votes.values());
        if (votes.getOrDefault(origin, 0) == max) return origin;
        for (String s : siteOrder) if (votes.getOrDefault(s, 0) == max) return s;
        throw new IllegalStateException("no configured site among " + votes.keySet());
    }

    /**
     * The member that executes {@code r}: the preferred site's member of {@code deliveryMembers} if it
     * is in {@code currentMembers}, else the first configured site with a member in both.
     */
    public String executor(TxnRequest r, Collection<String> deliveryMembers, Collection<String> currentMembers) {
        String preferred = preferredSite(r);
        for (String m : deliveryMembers)
            if (Members.siteOf(m).equals(preferred) && currentMembers.contains(m)) return m;
        for (String s : sites)
            for (String m : deliveryMembers)
                if (Members.siteOf(m).equals(s) && currentMembers.contains(m)) return m;
        throw new IllegalStateException("no member of the delivery view " + deliveryMembers + " is in the current view " + currentMembers);
    }
}
