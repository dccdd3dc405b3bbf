package org.wanrep.sql;

import org.junit.jupiter.api.Test;
import org.wanrep.lock.LockMode;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class BoundParametersTest {
    private static List<byte[]> v(String... s) {
        return Arrays.stream(s).map(x -> x == null ? null : x.getBytes(StandardCharsets.UTF_8)).toList();
    }

    @Test
    void inlinesTextValuesOutsideQuotesAndComments() {
        assertThat(BoundParameters.inline("UPDATE t SET v = $2 WHERE id = $1", v("5", "it's"), new short[0]))
                .isEqualTo("UPDATE t SET v = 'it''s' WHERE id = '5'");
        assertThat(BoundParameters.inline("SELECT '$1', \"$1\", $$ $1 $$, $f$x$f$ -- $1\n /* $1 /* $1 */ */ FROM a$1 WHERE x = $1", v("7"), new short[]{0}))
                .isEqualTo("SELECT '$1', \"$1\", $$ $1 $$, $f$x$f$ -- $1\n /* $1 /* $1 */ */ FROM a$1 WHERE x = '7'");
    }

    @Test
    void refusesWhatItCannotShowWithCertainty() {
        assertThat(BoundParameters.inline("SELECT $1", v("5"), new short[]{1})).isNull();            // binary
        assertThat(BoundParameters.inline("SELECT $1", v((String) null), new short[0])).isNull();     // NULL
        assertThat(BoundParameters.inline("SELECT $2", v("5"), new short[0])).isNull();               // unbound
        assertThat(BoundParameters.inline("SELECT $1", v("a\\b"), new short[0])).isNull();
        assertThat(BoundParameters.inline("SELECT 'x", v(), new short[0])).isNull();                  // unterminated
        assertThat(BoundParameters.inline("SELECT 1 /* x", v(), new short[0])).isNull();
        assertThat(BoundParameters.inline("SELECT $a$ x", v(), new short[0])).isNull();
    }

    /** Binary values are read where the declared type says how; a declared type that compares loosely is refused. */
    @Test
    void binaryIntegersAndTextWithDeclaredTypes() {
        List<byte[]> vs = List.of(new byte[]{0, 0, 0, 42}, new byte[]{(byte) 0xff, (byte) 0xfe}, new byte[]{0, 0, 0, 0, 0, 0, 1, 0}, "k".getBytes(StandardCharsets.UTF_8));
        assertThat(BoundParameters.inline("SELECT $1, $2, $3, $4", vs, new short[]{1}, new int[]{23, 21, 20, 25})).isEqualTo("SELECT '42', '-2', '256', 'k'");
        assertThat(BoundParameters.inline("SELECT $1", List.of(new byte[]{0, 0, 0, 42}), new short[]{1}, new int[]{0})).isNull();     // binary, type unknown
        assertThat(BoundParameters.inline("SELECT $1", List.of(new byte[]{0, 42}), new short[]{1}, new int[]{23})).isNull();          // wrong size
        assertThat(BoundParameters.inline("SELECT $1", v("5"), new short[0], new int[]{1042})).isNull();                               // bpchar: trailing blanks
        assertThat(BoundParameters.inline("SELECT $1", v("5"), new short[0], new int[]{701})).isNull();                                // float8
        assertThat(BoundParameters.inline("SELECT $1", v("5"), new short[0], new int[]{23})).isEqualTo("SELECT '5'");
    }

    /** The intended use: prepared pgbench statements lock rows once their values are inlined for classification. */
    @Test
    void inlinedParametersGiveRowLocks() {
        SqlClassifier c = new SqlClassifier(() -> RowKeysTest.CAT, Map.of());
        String text = BoundParameters.inline("UPDATE accounts SET balance = balance + $1 WHERE id = $2", v("-5", "42"), new short[0]);
        assertThat(c.analyze(List.of(text)).tables().rows()).isEqualTo(Map.of("public.accounts", Map.of("42", LockMode.WRITE)));
        assertThat(c.analyze(List.of("UPDATE accounts SET balance = balance + $1 WHERE id = $2")).tables().rows()).isEmpty();
    }
}
