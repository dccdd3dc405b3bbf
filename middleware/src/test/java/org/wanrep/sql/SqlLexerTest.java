package org.wanrep.sql;

import org.junit.jupiter.api.Test;
import org.wanrep.sql.SqlLexer.Kind;
import org.wanrep.sql.SqlLexer.Token;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

class SqlLexerTest {

    /** kind:text of every token but white space. */
    private static List<String> lex(String sql) {
        List<String> out = new ArrayList<>();
        int at = 0;
        for (Token t : SqlLexer.tokens(sql)) {
            assertThat(t.start()).as("tokens cover the text without gaps").isEqualTo(at);
            at = t.end();
            if (t.kind() != Kind.SPACE) out.add(t.kind() + ":" + t.text(sql) + (t.unterminated() ? "!" : ""));
        }
        assertThat(at).isEqualTo(sql.length());
        return out;
    }

    @Test
    void nestedBlockComments() {
        assertThat(lex("a /* x /* y */ ; */ b")).containsExactly("IDENT:a", "COMMENT:/* x /* y */ ; */", "IDENT:b");
        assertThat(lex("a /* x /* y */ ;")).containsExactly("IDENT:a", "COMMENT:/* x /* y */ ;!");
        assertThat(SqlLexer.unterminated("select 1 /* open")).isTrue();
    }

    @Test
    void lineCommentAtTheEndWithoutNewline() {
        assertThat(lex("select 1 -- done")).containsExactly("KEYWORD:select", "NUMBER:1", "COMMENT:-- done");
        assertThat(SqlLexer.unterminated("select 1 -- done")).isFalse();
        assertThat(lex("a--x\nb")).containsExactly("IDENT:a", "COMMENT:--x", "IDENT:b");
        assertThat(lex("a+--x\nb")).containsExactly("IDENT:a", "OPERATOR:+", "COMMENT:--x", "IDENT:b");
    }

    @Test
    void dollarQuotesWithTagsAndDollarsInside() {
        assertThat(lex("$f$ a $ b $g$ c $$ $f$;")).containsExactly("DOLLAR_STRING:$f$ a $ b $g$ c $$ $f$", "SEMICOLON:;");
        assertThat(lex("$$it's;$$")).containsExactly("DOLLAR_STRING:$$it's;$$");
        assertThat(lex("$a$ $xa$ $a$")).containsExactly("DOLLAR_STRING:$a$ $xa$ $a$");
        assertThat(lex("$q$ open ;")).containsExactly("DOLLAR_STRING:$q$ open ;!");
        Token t = SqlLexer.tokens("$body$x;$body$").get(0);
        assertThat("$body$x;$body$".substring(t.bodyStart("$body$x;$body$"), t.bodyEnd("$body$x;$body$"))).isEqualTo("x;");
    }

    @Test
    void parametersAreNotDollarQuotes() {
        assertThat(lex("$1 + $23")).containsExactly("PARAM:$1", "OPERATOR:+", "PARAM:$23");
        assertThat(lex("$1$")).containsExactly("PARAM:$1", "OTHER:$");
        assertThat(lex("$$1$$")).containsExactly("DOLLAR_STRING:$$1$$");
    }

    @Test
    void identifiersWithDollarsAndFolding() {
        assertThat(lex("a$b$ c")).containsExactly("IDENT:a$b$", "IDENT:c");
        assertThat(lex("x$1")).containsExactly("IDENT:x$1");
        assertThat(lex("SeLeCt \u017Felect \u00E9t\u00E9")).as("ASCII folding only").containsExactly("KEYWORD:SeLeCt", "IDENT:\u017Felect", "IDENT:\u00E9t\u00E9");
        List<Token> ts = SqlLexer.tokens("MyTab \"MyTab\" \"a\"\"b\" U&\"d\\0061t\"");
        String s = "MyTab \"MyTab\" \"a\"\"b\" U&\"d\\0061t\"";
        assertThat(ts.get(0).identifier(s)).isEqualTo("mytab");
        assertThat(ts.get(2).identifier(s)).isEqualTo("MyTab");
        assertThat(ts.get(4).identifier(s)).isEqualTo("a\"b");
        assertThat(ts.get(6).kind()).isEqualTo(Kind.QUOTED_IDENT);
        assertThat(lex("\"semi;colon\";")).containsExactly("QUOTED_IDENT:\"semi;colon\"", "SEMICOLON:;");
        assertThat(lex("\"open")).containsExactly("QUOTED_IDENT:\"open!");
    }

    @Test
    void strings() {
        assertThat(lex("'it''s;'")).containsExactly("STRING:'it''s;'");
        assertThat(lex("E'\\'';'")).containsExactly("STRING:E'\\''", "SEMICOLON:;", "STRING:'!");
        assertThat(lex("e'a\\\\' ;")).containsExactly("STRING:e'a\\\\'", "SEMICOLON:;");
        assertThat(lex("'a\\' ;")).as("standard strings: a backslash is a character").containsExactly("STRING:'a\\'", "SEMICOLON:;");
        assertThat(lex("U&'\\0041;' x")).containsExactly("STRING:U&'\\0041;'", "IDENT:x");
        assertThat(lex("B'101' X'1F' N'n'")).containsExactly("STRING:B'101'", "STRING:X'1F'", "STRING:N'n'");
        assertThat(lex("abe'x'")).as("a prefix only at a token start").containsExactly("IDENT:abe", "STRING:'x'");
        assertThat(lex("E'\\")).containsExactly("STRING:E'\\!");
    }

    @Test
    void numbersOperatorsPunctuation() {
        assertThat(lex("1.5e-3 .5 1..2 0x1F 1_000"))
                .containsExactly("NUMBER:1.5e-3", "NUMBER:.5", "NUMBER:1", "PUNCT:..", "NUMBER:2", "NUMBER:0x1F", "NUMBER:1_000");
        assertThat(lex("a::int := b => c <> d>=-1"))
                .containsExactly("IDENT:a", "PUNCT:::", "IDENT:int", "PUNCT::=", "IDENT:b", "PUNCT:=>", "IDENT:c", "OPERATOR:<>", "IDENT:d",
                        "OPERATOR:>=", "OPERATOR:-", "NUMBER:1");
        assertThat(lex("a @- b")).containsExactly("IDENT:a", "OPERATOR:@-", "IDENT:b");
        assertThat(lex("t.c[1]")).containsExactly("IDENT:t", "PUNCT:.", "IDENT:c", "PUNCT:[", "NUMBER:1", "PUNCT:]");
    }

    @Test
    void splitStatementsFollowsTheLexer() {
        assertThat(UnitClassifier.splitStatements("select E'\\';'; select 2")).containsExactly("select E'\\';'", " select 2");
        assertThat(UnitClassifier.splitStatements("select 1 /* a /* b */ ; */; select 2")).containsExactly("select 1 /* a /* b */ ; */", " select 2");
        assertThat(UnitClassifier.splitStatements("select $1; select $x$;$x$;;  ;")).containsExactly("select $1", " select $x$;$x$");
        assertThat(UnitClassifier.splitStatements("select 1 -- c;")).containsExactly("select 1 -- c;");
        assertThat(UnitClassifier.stripComments("select '--x' -- y\n/*z*/ 1")).isEqualTo("select '--x'  \n  1");
    }

    /** A text normalized again (equal, or the same string) gives the same shape and literals as the first time, from the memo. */
    @Test
    void normalizingAgainGivesTheSameShapeAndLiterals() {
        String a = "UPDATE t SET v = v + -12 WHERE id = 42 AND s = 'x''y'";
        List<String> first = new ArrayList<>(), again = new ArrayList<>(List.of("kept"));
        String shape = SqlText.normalize(a, first);
        for (int i = 0; i < 3; i++) SqlText.normalize("select " + i + ", '" + i + "'");   // others in between, fewer than the memo keeps
        assertThat(SqlText.normalize(new String(a), again)).isEqualTo(shape).isEqualTo("UPDATE t SET v = v + -? WHERE id = ? AND s = ?");
        assertThat(first).containsExactly("12", "42", "'x''y'");
        assertThat(again).containsExactly("kept", "12", "42", "'x''y'");
        for (int i = 0; i < 10; i++) SqlText.normalize("select " + i);   // pushed out: normalized anew, alike
        List<String> late = new ArrayList<>();
        assertThat(SqlText.normalize(a, late)).isEqualTo(shape);
        assertThat(late).isEqualTo(first);
    }

    /** Where the old scanners read differently from PostgreSQL. */
    @Test
    void portedScannersFollowPostgres() {
        assertThat(SqlText.functionCalls("select \"Audit\"(1), s.\"f\"(2), e'\\'x(' || g(3)")).containsExactly("Audit", "s.f", "g");
        assertThat(SqlText.functionCalls("do $$ begin perform h(1); end $$")).containsExactly("h");   // bodies are read as code
        assertThat(SqlText.normalize("select E'\\'1', 1e5, \"t 1\" from t /* 2 /* 3 */ 4 */")).isEqualTo("select ?, ?, \"t 1\" from t /* 2 /* 3 */ 4 */");
        assertThat(SqlText.normalize("select 'open")).isEqualTo("select 'open");
        assertThat(TimeRewriting.rewrite("select E'\\'now()', now()")).startsWith("select E'\\'now()', ((coalesce(");
        assertThat(TimeRewriting.rewrite("select 1 /* /* */ now() */")).isEqualTo("select 1 /* /* */ now() */");
        assertThat(BoundParameters.inline("select $1, '$2', $q$ $1 $q$ /* $1 /* */ */", List.of("a".getBytes()), new short[0]))
                .isEqualTo("select 'a', '$2', $q$ $1 $q$ /* $1 /* */ */");
        assertThat(FunctionBodies.stripLiteralsAndComments("x := E'\\'; loop'; -- c\ny")).isEqualTo("x := '';  \ny");
        assertThat(Catalog.splitName("\"My\".\"T.x\"")).containsExactly("My", "T.x");
        assertThat(Catalog.splitName("Pub.T")).containsExactly("pub", "t");
    }

    @Test
    void anUnterminatedTextLocksEveryTable() {
        UnitAnalysis a = new UnitClassifier().analyze(List.of("select 1; select 'open; delete from t"));
        assertThat(a.route()).isEqualTo(Route.UPDATE);
        assertThat(a.tables().all()).isTrue();
        assertThat(new UnitClassifier().analyze(List.of("select 1 /* open")).tables().all()).isTrue();
    }

    /** Generated statements with quotes, dollar quotes, comments and semicolons inside: joined with ';', split back. */
    @Test
    void splitStatementsRoundTrips() {
        long seed = Long.getLong("wanrep.lexer.seed", System.nanoTime());
        System.out.println("SqlLexerTest seed " + seed + " (-Dwanrep.lexer.seed=" + seed + ")");
        Random r = new Random(seed);
        for (int run = 0; run < 2000; run++) {
            List<String> stmts = new ArrayList<>();
            int count = 1 + r.nextInt(5);
            for (int i = 0; i < count; i++) stmts.add(statement(r));
            String joined = String.join(";", stmts);
            assertThat(UnitClassifier.splitStatements(joined)).as("seed %d: %s", seed, joined).containsExactlyElementsOf(stmts);
            assertThat(SqlLexer.unterminated(joined)).isFalse();
        }
    }

    private static final String[] PIECES = {"select", "x", "a$b", "1.5", "$1", "+", "-", "(", ")", ",", "::int", "t.c", "\n", " "};
    private static final String[] NOISE = {";", "'", "\"", "$", "$$", "--", "/*", "*/", "\\", "\n", "e'", "x"};

    private static String statement(Random r) {
        StringBuilder b = new StringBuilder("select ");
        int parts = 1 + r.nextInt(8);
        for (int i = 0; i < parts; i++) {
            b.append(' ');
            switch (r.nextInt(8)) {
                case 0 -> b.append('\'').append(noise(r).replace("'", "''")).append('\'');
                case 1 -> b.append("E'").append(noise(r).replace("\\", "\\\\").replace("'", "\\'")).append('\'');
                case 2 -> b.append('"').append(noise(r).replace("\"", "\"\"")).append('"');
                case 3 -> {
                    String tag = r.nextBoolean() ? "$$" : "$t" + r.nextInt(3) + "$";
                    String body = noise(r);
                    while (body.contains(tag) || (body + tag).indexOf(tag) < body.length()) body = body.replace("$", "");   // the tag must not occur in the body
                    b.append(tag).append(body).append(tag);
                }
                case 4 -> b.append("/*").append(noise(r).replace("*/", "").replace("/*", "").replaceAll("[/*]$", "")).append("*/");
                case 5 -> b.append("/* a /* ").append(noise(r).replace("*/", "").replace("/*", "").replaceAll("[/*]$", "")).append(" */ b */");
                case 6 -> b.append("--").append(noise(r).replace("\n", "")).append('\n');
                default -> b.append(PIECES[r.nextInt(PIECES.length)]);
            }
        }
        return b.toString();
    }

    private static String noise(Random r) {
        StringBuilder b = new StringBuilder();
        int n = r.nextInt(6);
        for (int i = 0; i < n; i++) b.append(NOISE[r.nextInt(NOISE.length)]);
        return b.toString();
    }

    /** A text equal to one of the last few lexed on this thread is not lexed again; older ones are, with the same tokens. */
    @Test
    void recentTextsAreLexedOnce() {
        String a = "UPDATE t SET x = 1 WHERE id = 2";
        List<SqlLexer.Token> first = SqlLexer.tokens(a);
        assertThat(SqlLexer.tokens(new String(a.toCharArray()))).isSameAs(first);   // equal, built anew
        for (int i = 0; i < 3; i++) SqlLexer.tokens("SELECT " + i);
        assertThat(SqlLexer.tokens(a)).isSameAs(first);
        for (int i = 0; i < 4; i++) SqlLexer.tokens("SELECT " + (10 + i));
        List<SqlLexer.Token> again = SqlLexer.tokens(a);
        assertThat(again).isNotSameAs(first).isEqualTo(first);
        assertThat(SqlLexer.tokens("UPDATE t SET x = 10 WHERE id = 2")).isNotEqualTo(first);   // positions differ
    }

    /** containsIgnoreCase skips ASCII positions that cannot begin the word; it finds what regionMatches at every position finds. */
    @Test
    void containsIgnoreCaseFindsWhatEveryPositionFinds() {
        long seed = Long.getLong("wanrep.test.seed", System.nanoTime());
        System.out.println("SqlLexerTest seed " + seed + " (-Dwanrep.test.seed=" + seed + " repeats it)");
        java.util.Random r = new java.util.Random(seed);
        String[] words = {"temp", "set_config", "advisory", "random", "k", "_x", "1a", "\u212Aey", "select"};
        String[] parts = {"TEMP", "tEmP", "te", "mp", "set_", "SET_CONFIG", "config", "\u212A", "K", "k", "ey", "EY", "_", "_X", "1A", "1a",
                "random", "RAND", "om", "\u0130", "\u0131", "\u017F", "s", "elect", "SEL", " ", ";", "'", "x", "\u00E9"};
        int found = 0;
        for (int i = 0; i < 50_000; i++) {
            StringBuilder b = new StringBuilder();
            for (int k = r.nextInt(6); k >= 0; k--) b.append(parts[r.nextInt(parts.length)]);
            String s = b.toString(), w = words[r.nextInt(words.length)];
            boolean expected = false;
            for (int p = 0; p + w.length() <= s.length() && !expected; p++) expected = s.regionMatches(true, p, w, 0, w.length());
            assertThat(SqlText.containsIgnoreCase(s, w)).as("seed %d: [%s] in [%s]", seed, w, s).isEqualTo(expected);
            if (expected) found++;
        }
        assertThat(found).isGreaterThan(1000);
    }
}
