package org.wanrep.frontend;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Which texts make a session read its settings again, and the command named in a read-only refusal. */
class SessionSettingsTest {
    @Test
    void settingChangesAreNoticedAndUpdatesAreNot() {
        SessionSettings s = new SessionSettings("alice");
        assertThat(s.noteTexts(List.of("SET standard_conforming_strings = off"))).isTrue();
        assertThat(s.noteTexts(List.of("select 1; reset all"))).isTrue();
        assertThat(s.noteTexts(List.of("/* x */ DISCARD ALL"))).isTrue();
        assertThat(s.noteTexts(List.of("SELECT pg_catalog.set_config('app.tag', 'x', false)"))).isTrue();
        // an UPDATE's SET clause or an OFFSET is no settings change: no round trip per update
        assertThat(s.noteTexts(List.of("UPDATE t SET x = 1 WHERE id = 2"))).isFalse();
        assertThat(s.noteTexts(List.of("SELECT * FROM t OFFSET 5", "INSERT INTO settings VALUES (1)"))).isFalse();
    }

    @Test
    void commandNamesFollowPostgres() {
        assertThat(SessionSettings.commandName(List.of("insert into t values (1)"))).isEqualTo("INSERT");
        assertThat(SessionSettings.commandName(List.of("-- c\n  update t set x = 1"))).isEqualTo("UPDATE");
        assertThat(SessionSettings.commandName(List.of("create table t(x int)"))).isEqualTo("CREATE TABLE");
    }
}
