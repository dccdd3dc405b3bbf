package org.wanrep.gcs;

import java.util.List;
import java.util.Set;

/**
 * A view as the application sees it.
 *
 * @param viewId    membership view id (from the membership service, increasing)
 * @param epoch     number of the primary view installed by the total-order layer (0 if none yet)
 * @param members   members in view order
 * @param primary   whether this view holds a majority of the configured sites; only a primary view orders
 * @param joined    true when this member entered the primary component without the history before
 *                  {@code firstGsn}: the application must transfer state before trusting its replica
 * @param firstGsn  the GSN the next ordered delivery will carry
 * @param sequencer the member that orders in this view (null if not primary)
 */
public record GcsView(long viewId, long epoch, List<String> members, boolean primary, boolean joined,
                      long firstGsn, String sequencer) {
    public Set<String> sites() {
        return members.stream().map(Members::siteOf).collect(java.util.stream.Collectors.toCollection(java.util.TreeSet::new));
    }
}
