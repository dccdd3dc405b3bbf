package org.wanrep.frontend;

import org.wanrep.sql.UnitClassifier;

import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * A transaction block sent as one Query ({@code BEGIN; ...; COMMIT;}, as {@code psql -c} and schema
 * scripts write it): one transaction, exactly like a multi-statement request without the two.
 */
final class WrappedBlock {
    private WrappedBlock() {}

    private static final Pattern BEGIN = Pattern.compile("(?is)\\s*(begin(\\s+(work|transaction))?|start\\s+transaction)(\\s+isolation\\s+level\\s+[a-z ]+?)?\\s*");
    private static final Pattern COMMIT = Pattern.compile("(?is)\\s*(commit|end)(\\s+(work|transaction))?\\s*");
    private static final Pattern CONTROL = Pattern.compile("(?is)\\s*(begin|start|commit|end|rollback|abort|prepare\\s+transaction)\\b.*");
    private static final Pattern SAVEPOINT_ROLLBACK = Pattern.compile("(?is)\\s*rollback\\s+(work\\s+|transaction\\s+)?to\\b.*");

    /**
     * The statements between BEGIN and COMMIT if {@code sql} is exactly one such block with nothing
     * before or after and no other transaction control inside (savepoints are fine); else null.
     * A READ ONLY or DEFERRABLE block is not taken apart (PostgreSQL judges it as sent).
     */
    static String inner(String sql) {
        if (sql.length() < 12) return null;
        char c = (char) (firstNonSpace(sql) | 0x20);
        if (c != 'b' && c != 's') return null;   // the common case costs one look
        List<String> parts = UnitClassifier.splitStatements(sql);
        if (parts.size() < 3) return null;
        String first = UnitClassifier.stripComments(parts.get(0)), last = UnitClassifier.stripComments(parts.get(parts.size() - 1));
        if (!BEGIN.matcher(first).matches() || !COMMIT.matcher(last).matches()) return null;
        List<String> middle = parts.subList(1, parts.size() - 1);
        for (String m : middle) {
            String s = UnitClassifier.stripComments(m);
            if (CONTROL.matcher(s).matches() && !SAVEPOINT_ROLLBACK.matcher(s).matches()) return null;
        }
        return String.join(";", middle);
    }

    private static char firstNonSpace(String s) {
        for (int i = 0; i < s.length(); i++) if (!Character.isWhitespace(s.charAt(i))) return s.charAt(i);
        return ' ';
    }
}
