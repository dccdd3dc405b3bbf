package org.wanrep.frontend;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The scan that spares nearly every text the settings regex ({@link SessionSettings#mayChange}) answers as the regex
 * does: never "no change" where the regex finds one (the session's settings would go stale), and for ASCII texts
 * exactly as it does. Seeded texts from pieces that matter to it; seed: {@code -Dwanrep.settings.seed=N}.
 */
class SettingsChangeScanTest {
    private static final List<String> PIECES = List.of("set", "SET", "Set", "reset", "RESET", "discard", "Discard", "set_config", "SET_CONFIG",
            ";", " ", "  ", "\n", "\t", "\r", "\f", "\u000B", "/*", "*/", "--", "-", "/", "x", "update t ", "settings", "_", "(", "'", "\"",
            "1", "select ", "reseta", "sets", "\u00a0", "é", "ſet", "wanrep.ts", " = 1");

    @Test
    void theScanAgreesWithTheRegex() {
        long seed = Long.getLong("wanrep.settings.seed", new Random().nextLong());
        System.out.println("settings change scan seed " + seed);
        Random rnd = new Random(seed);
        for (int i = 0; i < 200_000; i++) {
            StringBuilder b = new StringBuilder();
            for (int k = rnd.nextInt(8); k >= 0; k--) b.append(PIECES.get(rnd.nextInt(PIECES.size())));
            String t = b.toString();
            boolean regex = SessionSettings.CHANGE.matcher(t).find();
            boolean scan = SessionSettings.mayChange(t);
            if (regex) assertThat(scan).as("seed %d: %s", seed, t).isTrue();
            if (t.chars().allMatch(c -> c < 128)) assertThat(scan).as("seed %d: %s", seed, t).isEqualTo(regex);
        }
    }

    @Test
    void pgbenchsUpdatesNeedNoRegex() {
        assertThat(SessionSettings.mayChange("UPDATE pgbench_accounts SET abalance = abalance + -4 WHERE aid = 7;")).isFalse();
        assertThat(SessionSettings.mayChange("select 1; SET x = 1")).isTrue();
        assertThat(SessionSettings.mayChange("  /* c */ reset all")).isTrue();
        assertThat(SessionSettings.mayChange("select pg_catalog.set_config('a.b', '1', false)")).isTrue();
    }
}
