package org.wanrep.writeset.capture;

import org.wanrep.writeset.RowChange.Action;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Turns one message of the {@code test_decoding} output plugin (PostgreSQL 15, options
 * {@code include-xids=0}, {@code include-timestamp=0}, a slot created with two-phase decoding) into an
 * {@link Event}. Pure: no I/O, tested on lines captured from a real server.
 * <p>
 * What test_decoding writes, as observed on PostgreSQL 15.20:
 * <pre>
 * BEGIN
 * table public.t: INSERT: id[integer]:1 v[character varying]:'it''s' bi[bit]:B'0101' f[double precision]:NaN
 * table public.t: UPDATE: old-key: id[integer]:2 new-tuple: id[integer]:3 big[text]:unchanged-toast-datum
 * table "My Schema"."Tab ""q"" ]:": DELETE: id[integer]:1
 * table public.nopk: DELETE: (no-tuple-data)
 * message: transactional: 1 prefix: wanrep, sz: 4 content:tag1
 * PREPARE TRANSACTION 'g1'             (quote_literal: E'a\\b''c' when the gid holds a backslash)
 * COMMIT
 * COMMIT PREPARED 'g1'
 * ROLLBACK PREPARED 'g1'
 * </pre>
 * <ul>
 *   <li>Table names are {@code quote_qualified_identifier}, column names {@code quote_identifier}: bare
 *       {@code [a-z0-9_]} or double-quoted with {@code ""} doubling.</li>
 *   <li>The bracketed type is {@code format_type} WITHOUT typmod and may itself hold quoted identifiers
 *       with {@code ]} or {@code :}: it ends at the first {@code ]:} outside double quotes. It is kept only
 *       for messages; the capture takes types from the catalog.</li>
 *   <li>Values: {@code null}; {@code unchanged-toast-datum}; {@code 'text'} with only {@code '} doubled
 *       (backslashes and newlines are literal); {@code B'0101'} for bit and bit varying; bare tokens for
 *       int2/4/8, oid, float4/8, numeric (including {@code NaN}, {@code Infinity}, {@code -Infinity}) and
 *       {@code true}/{@code false} for boolean.</li>
 *   <li>Old-key and DELETE tuples leave NULL columns out (a REPLICA IDENTITY FULL row with NULLs prints
 *       fewer columns); new tuples print {@code null}.</li>
 * </ul>
 */
public final class TestDecodingParser {
    private TestDecodingParser() {}

    /** What test_decoding prints after "TRUNCATE: ": (no-flags), or restart_seqs and/or cascade. */
    private static final java.util.regex.Pattern TRUNCATE_FLAGS = java.util.regex.Pattern.compile("\\(no-flags\\)|(restart_seqs|cascade)( (restart_seqs|cascade))?");

    /** One column as printed: {@code value} is null for SQL NULL; {@code toastUnchanged} for {@code unchanged-toast-datum}. */
    public record Column(String name, String type, String value, boolean toastUnchanged) {
        public static Column of(String name, String type, String value) { return new Column(name, type, value, false); }
    }

    /** One test_decoding message. */
    public sealed interface Event {}

    public record Begin() implements Event {}

    /**
     * A row change. {@code oldKey}: the old-key tuple of an UPDATE, or the tuple of a DELETE; null when not
     * printed ({@code (no-tuple-data)}, or an UPDATE that did not log its old key). {@code newTuple}: the
     * new row of an INSERT or UPDATE; null for DELETE and for {@code (no-tuple-data)}.
     */
    public record Change(String schema, String table, Action action, List<Column> oldKey, List<Column> newTuple) implements Event {
        public Change {
            oldKey = oldKey == null ? null : List.copyOf(oldKey);
            newTuple = newTuple == null ? null : List.copyOf(newTuple);
        }
    }

    public record Prepare(String gid) implements Event {}

    /** A TRUNCATE of one or more tables ({@code table a, b: TRUNCATE: flags}): a write set cannot carry it. */
    public record Truncate(String tables) implements Event {}

    /** The end of an ordinary transaction. */
    public record Commit() implements Event {}

    public record CommitPrepared(String gid) implements Event {}

    public record RollbackPrepared(String gid) implements Event {}

    /** A logical message ({@code pg_logical_emit_message}); {@code content} as far as it could be recovered. */
    public record Message(boolean transactional, String prefix, String content) implements Event {}

    /** Parses one message; throws {@link IOException} naming the position if it is not test_decoding output. */
    public static Event parse(String line) throws IOException {
        if (line.startsWith("table ")) {
            int t = line.indexOf(": TRUNCATE: ");
            // a TRUNCATE lists its tables, comma-separated; a row change names one (whose quoted name could hold the text)
            if (t > 0 && TRUNCATE_FLAGS.matcher(line.substring(t + ": TRUNCATE: ".length())).matches()) {
                try {
                    return new Cursor(line).change();
                } catch (IOException notARowChange) {
                    return new Truncate(line.substring("table ".length(), t));
                }
            }
            return new Cursor(line).change();
        }
        if (line.equals("BEGIN") || line.startsWith("BEGIN ") && isXidSuffix(line.substring(6))) return new Begin();
        if (line.startsWith("PREPARE TRANSACTION ")) return new Prepare(new Cursor(line).gid("PREPARE TRANSACTION ".length()));
        if (line.startsWith("COMMIT PREPARED ")) return new CommitPrepared(new Cursor(line).gid("COMMIT PREPARED ".length()));
        if (line.startsWith("ROLLBACK PREPARED ")) return new RollbackPrepared(new Cursor(line).gid("ROLLBACK PREPARED ".length()));
        if (line.equals("COMMIT") || line.startsWith("COMMIT ") && (isXidSuffix(line.substring(7)) || line.startsWith("COMMIT (at ")))
            return new Commit();
        if (line.startsWith("message: ")) return message(line);
        throw malformed(line, 0, "not a test_decoding line");
    }

    private static boolean isXidSuffix(String s) {
        return !s.isEmpty() && s.chars().allMatch(Character::isDigit);
    }

    /** {@code message: transactional: 1 prefix: P, sz: N content:C}; the prefix may itself hold ", sz: ". */
    private static Message message(String line) throws IOException {
        String head = "message: transactional: ";
        if (!line.startsWith(head) || line.length() < head.length() + 1) throw malformed(line, 0, "malformed message line");
        char t = line.charAt(head.length());
        if (t != '0' && t != '1' || !line.startsWith(" prefix: ", head.length() + 1)) throw malformed(line, head.length(), "malformed message line");
        int p = head.length() + 1 + " prefix: ".length();
        int sz = line.indexOf(", sz: ", p);
        if (sz < 0) throw malformed(line, p, "message line without sz");
        int content = line.indexOf(" content:", sz);
        String prefix = line.substring(p, sz);
        return new Message(t == '1', prefix, content < 0 ? null : line.substring(content + " content:".length()));
    }

    static IOException malformed(String line, int at, String why) {
        String shown = line.length() > 200 ? line.substring(0, 200) + "..." : line;
        return new IOException("malformed test_decoding output (" + why + ") at offset " + at + ": " + shown);
    }

    /** A position in a line being parsed. */
    private static final class Cursor {
        final String s;
        int i;

        Cursor(String s) { this.s = s; }

        IOException bad(String why) { return malformed(s, i, why); }

        boolean at(String token) { return s.startsWith(token, i); }

        void expect(String token) throws IOException {
            if (!at(token)) throw bad("expected \"" + token + "\"");
            i += token.length();
        }

        /** A quote_identifier'ed name: bare [a-z0-9_]... (ASCII letters of any case, digits, _, $ accepted) or "..." with "" doubling. */
        String identifier() throws IOException {
            if (i >= s.length()) throw bad("expected an identifier");
            if (s.charAt(i) == '"') {
                StringBuilder b = new StringBuilder();
                i++;
                while (true) {
                    if (i >= s.length()) throw bad("unterminated quoted identifier");
                    char c = s.charAt(i++);
                    if (c == '"') {
                        if (i < s.length() && s.charAt(i) == '"') {
                            b.append('"');
                            i++;
                        } else break;
                    } else b.append(c);
                }
                if (b.isEmpty()) throw bad("empty quoted identifier");
                return b.toString();
            }
            int start = i;
            while (i < s.length() && isBare(s.charAt(i))) i++;
            if (i == start) throw bad("expected an identifier");
            return s.substring(start, i);
        }

        private static boolean isBare(char c) {
            return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$';
        }

        Change change() throws IOException {
            expect("table ");
            String schema = identifier();
            expect(".");
            String table = identifier();
            expect(": ");
            Action action;
            if (at("INSERT:")) action = Action.INSERT;
            else if (at("UPDATE:")) action = Action.UPDATE;
            else if (at("DELETE:")) action = Action.DELETE;
            else throw bad("expected INSERT:, UPDATE: or DELETE:");
            i += 7;
            if (at(" (no-tuple-data)")) {
                i += " (no-tuple-data)".length();
                end();
                return new Change(schema, table, action, null, null);
            }
            List<Column> oldKey = null, newTuple;
            if (action == Action.UPDATE && at(" old-key:")) {
                i += " old-key:".length();
                oldKey = tuple(" new-tuple:");
                expect(" new-tuple:");
            }
            List<Column> t = tuple(null);
            end();
            if (action == Action.DELETE) {
                oldKey = t;
                newTuple = null;
            } else newTuple = t;
            return new Change(schema, table, action, oldKey, newTuple);
        }

        private void end() throws IOException {
            if (i != s.length()) throw bad("unexpected text after the row");
        }

        /** Columns " name[type]:value" until the end of the line or {@code stop}. */
        private List<Column> tuple(String stop) throws IOException {
            List<Column> out = new ArrayList<>();
            while (i < s.length() && (stop == null || !at(stop))) {
                expect(" ");
                String name = identifier();
                expect("[");
                String type = type();
                String value = null;
                boolean toast = false;
                if (at("null") && ends(4)) i += 4;
                else if (at("unchanged-toast-datum") && ends(21)) {
                    i += 21;
                    toast = true;
                } else if (at("'")) value = quoted();
                else if (at("B'")) {
                    i++;
                    value = quoted();
                    if (!value.chars().allMatch(c -> c == '0' || c == '1')) throw bad("bit string with other digits than 0 and 1");
                } else value = bare();
                out.add(new Column(name, type, value, toast));
            }
            return out;
        }

        /** Whether the token of {@code n} characters at i ends there (end of line or a space). */
        private boolean ends(int n) {
            return i + n == s.length() || s.charAt(i + n) == ' ';
        }

        /** The type text up to the first "]:" outside double quotes; i moves past the "]:". */
        private String type() throws IOException {
            int start = i;
            boolean quoted = false;
            for (; i < s.length(); i++) {
                char c = s.charAt(i);
                if (c == '"') quoted = !quoted;   // "" inside quotes toggles twice: stays quoted
                else if (!quoted && c == ']' && i + 1 < s.length() && s.charAt(i + 1) == ':') {
                    String type = s.substring(start, i);
                    i += 2;
                    if (type.isEmpty()) throw malformed(s, start, "empty type");
                    return type;
                }
            }
            i = start;
            throw bad("type without closing ]:");
        }

        /** A '...' literal with '' doubling; nothing else is escaped. */
        private String quoted() throws IOException {
            int start = i;
            i++;
            StringBuilder b = new StringBuilder();
            while (true) {
                int q = s.indexOf('\'', i);
                if (q < 0) {
                    i = start;
                    throw bad("unterminated quoted value");
                }
                b.append(s, i, q);
                i = q + 1;
                if (i < s.length() && s.charAt(i) == '\'') {
                    b.append('\'');
                    i++;
                } else break;
            }
            if (i < s.length() && s.charAt(i) != ' ') throw bad("text after a quoted value");
            return b.toString();
        }

        /** A number, NaN, Infinity, true or false: up to the next space. */
        private String bare() throws IOException {
            int start = i;
            while (i < s.length() && s.charAt(i) != ' ') i++;
            String v = s.substring(start, i);
            if (v.isEmpty()) {
                i = start;
                throw bad("missing value");
            }
            if (!v.equals("true") && !v.equals("false") && !v.equals("NaN") && !v.equals("Infinity") && !v.equals("-Infinity")
                    && !v.matches("[-+]?[0-9]+(\\.[0-9]*)?([eE][-+]?[0-9]+)?")) {
                i = start;
                throw bad("unexpected unquoted value \"" + (v.length() > 40 ? v.substring(0, 40) + "..." : v) + "\"");
            }
            return v;
        }

        /** A quote_literal'ed gid: 'x' with '' doubling, or E'x' (when it holds a backslash) with \\ and '' doubling. */
        String gid(int from) throws IOException {
            i = from;
            boolean e = at("E'");
            if (e) i++;
            if (!at("'")) throw bad("expected a quoted gid");
            i++;
            StringBuilder b = new StringBuilder();
            while (true) {
                if (i >= s.length()) throw bad("unterminated gid");
                char c = s.charAt(i++);
                if (c == '\'') {
                    if (i < s.length() && s.charAt(i) == '\'') {
                        b.append('\'');
                        i++;
                    } else break;
                } else if (e && c == '\\') {
                    if (i >= s.length()) throw bad("unterminated gid");
                    b.append(s.charAt(i++));
                } else b.append(c);
            }
            // include-xids / include-timestamp would append ", txid N" or " (at ...)"
            if (i != s.length() && !at(", txid ") && !at(" (at ")) throw bad("unexpected text after the gid");
            return b.toString();
        }
    }
}
