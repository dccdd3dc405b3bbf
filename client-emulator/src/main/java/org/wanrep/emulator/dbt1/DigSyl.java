package org.wanrep.emulator.dbt1;

/**
 * TPC-W's DigSyl: a number spelled with one syllable per decimal digit. The same function exists
 * in SQL ({@code digsyl} in load.sql); user names, author names and title words are built from it,
 * so the client can log in as any customer and search for authors and titles that exist.
 */
public final class DigSyl {
    private static final String[] SYLLABLES = {"BA", "OG", "AL", "RI", "RE", "SE", "AT", "UL", "IN", "NG"};

    private DigSyl() {}

    public static String of(long n) {
        String digits = Long.toString(n);
        StringBuilder b = new StringBuilder(digits.length() * 2);
        for (char d : digits.toCharArray()) b.append(d == '-' ? "-" : SYLLABLES[d - '0']);
        return b.toString();
    }
}
