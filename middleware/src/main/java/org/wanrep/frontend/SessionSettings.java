package org.wanrep.frontend;

import org.wanrep.backend.BackendConnection;
import org.wanrep.sql.SqlText;
import org.wanrep.wire.PayloadReader;
import org.wanrep.wire.PgError;
import org.wanrep.wire.WireMessage;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The settings of a client's session that can change what an update does, shipped with each of its
 * updates so that every site runs it as the origin's session does (applied there with
 * {@code set_config(name, value, true)} in our BEGIN, a message before the request's own, see
 * {@link org.wanrep.exec.WireTxnExecutor}). Read from the client's backend after anything that may
 * have changed them: every setting the client (startup packet), its session (SET, set_config) or its
 * role set, plus those that change what text means whatever their source (a site's configuration may
 * differ), plus custom placeholders ({@code app.tag}) the session set, which pg_settings does not list.
 * A few are never shipped: what our BEGIN fixes itself (isolation), timeouts (they only make a site
 * retry), identity ({@code role}, {@code session_authorization}: such sessions' updates are refused),
 * and read-only defaults (such updates are refused at the origin, as PostgreSQL would, before ordering).
 */
final class SessionSettings {
    /** Settings shipped whatever their source: they change how text is read or values are written, and a site's configuration may differ. */
    static final Set<String> ALWAYS = org.wanrep.sql.SiteLocal.CARRIED_SETTINGS;

    /** Never shipped: fixed by our BEGIN, handled by a refusal, harmless, or only able to make a site retry. */
    static final Set<String> NEVER = Set.of("application_name", "transaction_isolation", "transaction_read_only",
            "transaction_deferrable", "default_transaction_isolation", "default_transaction_read_only",
            "default_transaction_deferrable", "role", "session_authorization", "statement_timeout", "lock_timeout",
            "idle_in_transaction_session_timeout", "idle_session_timeout", "temp_buffers", "is_superuser");

    /** A statement that may change a setting: SET, RESET, DISCARD at a statement's start, or set_config() anywhere. */
    static final Pattern CHANGE = Pattern.compile(
            "(?is)(?:^|;)\\s*(?:(?:/\\*.*?\\*/|--[^\\n]*\\n)\\s*)*(?:set|reset|discard)\\b|set_config");
    /** Custom (dotted) names a text sets: SET [SESSION|LOCAL] a.b, RESET a.b, set_config('a.b', ...). */
    private static final Pattern CUSTOM = Pattern.compile(
            "(?i)(?:\\b(?:set|reset)\\s+(?:session\\s+|local\\s+)?\"?([a-z_][\\w$]*\"?\\s*\\.\\s*\"?[\\w$]+)\"?)"
                    + "|(?:set_config\\s*\\(\\s*'([a-z_][\\w$]*\\.[\\w$.]+)')");
    /** Our own placeholders (the replicated time): never the client's. */
    private static final String OWN_PREFIX = "wanrep.";

    /** The user the backends connect as, here and at every site: a session running as another one changed identity. */
    private final String user;
    private final Set<String> custom = new TreeSet<>();
    private final Map<String, String> values = new LinkedHashMap<>();
    private boolean dirty = true, readOnly, identityChanged;

    SessionSettings(String user) { this.user = user; }

    /** The settings to ship with this session's next update. */
    Map<String, String> values() { return values; }

    private long reads;

    /** How many times the settings were read: a session copies {@link #values} only when this moved. */
    long reads() { return reads; }

    /** True if one of these texts may change a setting (and notes custom names they set). */
    boolean noteTexts(List<String> texts) {
        boolean changes = false;
        for (String t : texts) {
            if (!SqlText.containsIgnoreCase(t, "set") && !SqlText.containsIgnoreCase(t, "discard")) continue;
            if (!mayChange(t)) continue;
            changes = true;
            Matcher m = CUSTOM.matcher(t);
            while (m.find()) {
                String name = (m.group(1) != null ? m.group(1) : m.group(2)).replace("\"", "").replaceAll("\\s", "").toLowerCase(Locale.ROOT);
                if (!name.startsWith(OWN_PREFIX)) custom.add(name);
            }
        }
        if (changes) dirty = true;
        return changes;
    }

    /**
     * Whether {@link #CHANGE} finds a match in {@code t}, without the regex for nearly every text (an UPDATE's SET made
     * it run on every update): set_config anywhere, or SET, RESET or DISCARD as a word where a statement starts (the
     * text's start, or after a semicolon, past the regex's white space). Where a comment may come first, the regex
     * itself decides.
     */
    static boolean mayChange(String t) {
        if (SqlText.containsIgnoreCase(t, "set_config")) return true;
        int n = t.length();
        for (int anchor = 0; anchor <= n; ) {
            int p = anchor;
            while (p < n && regexSpace(t.charAt(p))) p++;
            if (p < n) {
                char c = t.charAt(p);
                if (c == '/' || c == '-') return CHANGE.matcher(t).find();
                if (wordAt(t, p, "set") || wordAt(t, p, "reset") || wordAt(t, p, "discard")) return true;
            }
            int semi = t.indexOf(';', anchor);
            if (semi < 0) return false;
            anchor = semi + 1;
        }
        return false;
    }

    /** Java's {@code \s} without UNICODE_CHARACTER_CLASS. */
    private static boolean regexSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == 0x0B || c == '\f' || c == '\r'; }

    /** {@code word} (ASCII, lower case) at {@code p}, ignoring case, followed by a word boundary. */
    private static boolean wordAt(String t, int p, String word) {
        if (!t.regionMatches(true, p, word, 0, word.length())) return false;
        int e = p + word.length();
        if (e >= t.length()) return true;
        char c = t.charAt(e);
        return !(c < 128 && (Character.isLetterOrDigit(c) || c == '_'));
    }

    /** Marks the settings as to be read again (at startup, or after a transaction block ended). */
    void invalidate() { dirty = true; }

    /**
     * Reads the settings again if something may have changed them and the backend is idle (inside a
     * block, SET LOCAL values end with it: they are read once it ended; the block's log carries them).
     */
    void refreshIfNeeded(BackendConnection backend) throws IOException {
        if (!dirty || backend.status() != 'I') return;
        read(backend);
    }

    /** Reads every shipped setting from the client's backend; values travel hex-coded UTF-8, whatever the client's encoding. */
    void read(BackendConnection backend) throws IOException {
        StringBuilder names = new StringBuilder();
        for (String n : ALWAYS) names.append(names.isEmpty() ? "" : ", ").append(literal(n));
        StringBuilder customs = new StringBuilder();
        for (String n : custom) customs.append(customs.isEmpty() ? "" : ", ").append(literal(n));
        String sql = "SELECT name, pg_catalog.encode(pg_catalog.convert_to(setting, 'UTF8'), 'hex') FROM pg_catalog.pg_settings"
                + " WHERE context IN ('user', 'superuser') AND (source IN ('client', 'session', 'user', 'database user')"
                + " OR pg_catalog.lower(name) IN (" + names + "))"
                + (custom.isEmpty() ? "" : " UNION ALL SELECT n, pg_catalog.encode(pg_catalog.convert_to(v, 'UTF8'), 'hex') FROM"
                        + " (SELECT n, pg_catalog.current_setting(n, true) v FROM pg_catalog.unnest(ARRAY[" + customs + "]::text[]) n) c"
                        + " WHERE v IS NOT NULL")
                + " UNION ALL SELECT ' read_only', pg_catalog.current_setting('default_transaction_read_only')"
                + " UNION ALL SELECT ' identity', (current_user <> session_user OR session_user <> " + literal(user) + ")::text";
        Map<String, String> read = new LinkedHashMap<>();
        PgError error = null;
        // in a block of our own without the client's statement_timeout (else a short one could end the session here)
        backend.send(WireMessage.query("BEGIN ISOLATION LEVEL READ COMMITTED; SET LOCAL statement_timeout = 0; " + sql + "; COMMIT"));
        backend.flush();
        while (true) {
            WireMessage m = backend.read();
            if (m.kind() == 'D') {
                PayloadReader r = new PayloadReader(m.payload());
                r.int16();
                String name = new String(r.bytes(r.int32()), StandardCharsets.UTF_8);
                int len = r.int32();
                read.put(name, len < 0 ? null : new String(r.bytes(len), StandardCharsets.UTF_8));
            } else if (m.kind() == 'E' && error == null) {
                error = PgError.parse(m);
            }
            if (m.kind() == 'Z') break;
        }
        // an update shipped without its session's settings could run differently elsewhere: stop the session instead
        if (error != null) throw new org.wanrep.backend.BackendException(PgError.fatal("XX000", "wanrep: cannot read the session's settings: " + error.message()));
        values.clear();
        readOnly = "on".equals(read.remove(" read_only"));
        identityChanged = "true".equals(read.remove(" identity"));
        for (Map.Entry<String, String> e : read.entrySet()) {
            String name = e.getKey();
            if (NEVER.contains(name.toLowerCase(Locale.ROOT)) || name.startsWith(OWN_PREFIX) || e.getValue() == null) continue;
            values.put(name, new String(HexFormat.of().parseHex(e.getValue()), StandardCharsets.UTF_8));
        }
        dirty = false;
        reads++;
    }

    /**
     * Why an autocommit update of this session must not be ordered, or null. PostgreSQL would refuse
     * it in a read-only transaction; refused here, it is refused everywhere alike (nothing is ordered).
     */
    PgError refusal(List<String> texts) {
        if (readOnly)
            return PgError.error("25006", "cannot execute " + commandName(texts) + " in a read-only transaction");
        if (identityChanged)
            return PgError.error("0A000", "wanrep: updates after SET ROLE or SET SESSION AUTHORIZATION are not replicated")
                    .withHint("Other sites run updates as wanrep's replica user; RESET ROLE and RESET SESSION AUTHORIZATION, or connect as that role.");
        return null;
    }

    /** The command PostgreSQL names in its read-only error: the first statement's leading keyword(s). */
    static String commandName(List<String> texts) {
        for (String t : texts) {
            String s = t.replaceAll("(?s)/\\*.*?\\*/|--[^\\n]*", " ").strip();
            if (s.isEmpty()) continue;
            String[] w = s.split("[\\s(;]+", 3);
            String first = w[0].toUpperCase(Locale.ROOT);
            if (w.length > 1 && Set.of("CREATE", "ALTER", "DROP", "COMMENT", "GRANT", "REVOKE").contains(first))
                return first + " " + w[1].toUpperCase(Locale.ROOT);
            return first;
        }
        return "UPDATE";
    }

    private static String literal(String s) { return "'" + s.replace("'", "''") + "'"; }
}
