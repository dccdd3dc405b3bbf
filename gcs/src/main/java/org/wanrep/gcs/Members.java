package org.wanrep.gcs;

/**
 * Member naming: a member is called {@code site/incarnation}, so that every member can tell the
 * site of any other from its name alone (the WAN delay and the primary-component rule need it).
 */
public final class Members {
    private Members() {}

    public static String name(String site, String incarnation) {
        if (site.isEmpty() || site.contains("/")) throw new IllegalArgumentException("bad site name '" + site + "'");
        return site + "/" + incarnation;
    }

    public static String siteOf(String member) {
        int i = member.indexOf('/');
        return i < 0 ? member : member.substring(0, i);
    }
}
