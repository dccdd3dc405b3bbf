package org.wanrep.frontend;

import org.wanrep.wire.Messages;
import org.wanrep.wire.WireMessage;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Fixes the transaction time in a request's SQL: now(), current_timestamp and their relatives
 * become the origin's timestamp as a literal, so every site stores the same value. Only code is
 * rewritten, never string literals, quoted identifiers or comments.
 */
public final class TimeRewriting {
    private TimeRewriting() {}

    private static final Pattern FUNCS = Pattern.compile(
            "\\b(now\\s*\\(\\s*\\)|transaction_timestamp\\s*\\(\\s*\\)|current_timestamp(\\s*\\(\\s*\\d+\\s*\\))?|localtimestamp(\\s*\\(\\s*\\d+\\s*\\))?|current_date|localtime(\\s*\\(\\s*\\d+\\s*\\))?|current_time(\\s*\\(\\s*\\d+\\s*\\))?)(?![A-Za-z0-9_$])",
            Pattern.CASE_INSENSITIVE);
    private static final DateTimeFormatter TS = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSSSSS").withZone(ZoneOffset.UTC);

    public static List<WireMessage> rewrite(List<WireMessage> unit, long micros) {
        List<WireMessage> out = new ArrayList<>(unit.size());
        for (WireMessage m : unit) {
            if (m.kind() == 'Q') out.add(WireMessage.query(rewrite(m.queryText(), micros)));
            else if (m.kind() == 'P') out.add(Messages.withParseQuery(m, rewrite(Messages.parseQuery(m), micros)));
            else out.add(m);
        }
        return out;
    }

    /** The SQL with time functions replaced by literals of the same type. */
    public static String rewrite(String sql, long micros) {
        String ts = "'" + TS.format(Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1000)) + "+00'::timestamptz";
        StringBuilder out = new StringBuilder(sql.length() + 32);
        int n = sql.length(), i = 0, codeStart = 0;
        while (i < n) {
            char c = sql.charAt(i);
            int skipTo = -1;
            if (c == '\'' || c == '"') {
                int j = i + 1;
                while (j < n) {
                    if (sql.charAt(j) == c) {
                        if (j + 1 < n && sql.charAt(j + 1) == c) { j += 2; continue; }
                        break;
                    }
                    j++;
                }
                skipTo = Math.min(n, j + 1);
            } else if (c == '-' && i + 1 < n && sql.charAt(i + 1) == '-') {
                int j = sql.indexOf('\n', i);
                skipTo = j < 0 ? n : j + 1;
            } else if (c == '/' && i + 1 < n && sql.charAt(i + 1) == '*') {
                int j = sql.indexOf("*/", i + 2);
                skipTo = j < 0 ? n : j + 2;
            } else if (c == '$') {
                Matcher m = Pattern.compile("\\$[A-Za-z_0-9]*\\$").matcher(sql).region(i, n);
                if (m.lookingAt() && (i == 0 || !Character.isLetterOrDigit(sql.charAt(i - 1)) && sql.charAt(i - 1) != '_')) {
                    // a dollar-quoted body (a function or DO block): its code runs later, leave it
                    int j = sql.indexOf(m.group(), i + m.group().length());
                    skipTo = j < 0 ? n : j + m.group().length();
                }
            }
            if (skipTo >= 0) {
                out.append(rewriteCode(sql.substring(codeStart, i), ts));
                out.append(sql, i, skipTo);
                i = skipTo;
                codeStart = i;
            } else i++;
        }
        out.append(rewriteCode(sql.substring(codeStart), ts));
        return out.toString();
    }

    private static String rewriteCode(String code, String ts) {
        Matcher m = FUNCS.matcher(code);
        StringBuilder b = new StringBuilder();
        while (m.find()) {
            String f = m.group(1).toLowerCase(Locale.ROOT).replaceAll("\\s", "");
            String lit;
            if (f.startsWith("current_date")) lit = "(" + ts + ")::date";
            else if (f.startsWith("localtimestamp")) lit = "(" + ts + ")::timestamp";
            else if (f.startsWith("localtime")) lit = "(" + ts + ")::time";
            else if (f.startsWith("current_time") && !f.startsWith("current_timestamp")) lit = "(" + ts + ")::timetz";
            else lit = "(" + ts + ")";
            m.appendReplacement(b, Matcher.quoteReplacement(lit));
        }
        m.appendTail(b);
        return b.toString();
    }
}
