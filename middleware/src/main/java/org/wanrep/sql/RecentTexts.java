package org.wanrep.sql;

/**
 * What was last computed from a few texts on each thread, found again by equality: a session reads one request's
 * text several times (its shape, its statements, time functions, session commands, its log), often as equal strings
 * built anew (a message's text is decoded at each read). Newest first; the oldest goes when a new text comes. Longer
 * texts are not kept (a session thread would hold them until its next requests).
 */
final class RecentTexts<V> {
    private static final int MAX_CHARS = 16 << 10;

    private final int entries;
    /** Text, value, text, value... newest first. */
    private final ThreadLocal<Object[]> memo;

    RecentTexts(int entries) {
        this.entries = entries;
        this.memo = ThreadLocal.withInitial(() -> new Object[2 * entries]);
    }

    /** The value kept on this thread for a text equal to {@code text}, or null. */
    @SuppressWarnings("unchecked")
    V get(String text) {
        Object[] m = memo.get();
        int n = text.length();
        for (int i = 0; i < entries; i++) {
            Object k = m[2 * i];
            if (k == text || k != null && ((String) k).length() == n && k.equals(text)) return (V) m[2 * i + 1];
        }
        return null;
    }

    /** Keeps {@code value} for {@code text} on this thread (unless the text is long), pushing out the oldest. */
    void put(String text, V value) {
        if (text.length() > MAX_CHARS) return;
        Object[] m = memo.get();
        System.arraycopy(m, 0, m, 2, 2 * (entries - 1));
        m[0] = text;
        m[1] = value;
    }
}
