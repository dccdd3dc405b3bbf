package org.wanrep.gcs.core;

import org.wanrep.gcs.Members;

import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The configured site set and its changes, as pure functions (the core and the flush planner must
 * decide alike).
 *
 * <p>A change is accepted only if it adds or removes exactly one site. Then every majority of the old
 * set intersects every majority of the new one (as Raft's single-server changes): adding x to n sites,
 * a majority of the old set has floor(n/2)+1 sites, one of the new set floor((n+1)/2)+1 of which at
 * least floor((n+1)/2) are old ones; together n+1 old sites, so they share one (removal: the same with
 * the roles swapped). So members that disagree on whether the change is delivered yet can never count
 * two disjoint views as majorities. A second
 * change is judged against the set the first one left (changes apply in GSN order), so a batch of
 * changes is a sequence of single steps. Anything else (two sites at once, an empty set, duplicates)
 * is refused by every member at the same GSN, a no-op.
 */
public final class SiteSet {
    private SiteSet() {}

    /** The set after {@code proposed} is applied to {@code current}, or null if the change is refused. */
    public static List<String> apply(List<String> current, List<String> proposed) {
        if (proposed == null || proposed.isEmpty() || new HashSet<>(proposed).size() != proposed.size()) return null;
        for (String s : proposed) if (s.isEmpty() || s.contains("/")) return null;
        Set<String> cur = new HashSet<>(current), next = new HashSet<>(proposed);
        Set<String> added = new HashSet<>(next); added.removeAll(cur);
        Set<String> removed = new HashSet<>(cur); removed.removeAll(next);
        return added.size() + removed.size() == 1 ? List.copyOf(proposed) : null;
    }

    /** Whether these members hold more than half of the configured sites (members of other sites do not count). */
    public static boolean majority(Collection<String> members, List<String> configured) {
        Set<String> sites = sitesOf(members);
        sites.retainAll(configured);
        return sites.size() * 2 > configured.size();
    }

    public static Set<String> sitesOf(Collection<String> members) {
        Set<String> s = new TreeSet<>();
        for (String m : members) s.add(Members.siteOf(m));
        return s;
    }
}
