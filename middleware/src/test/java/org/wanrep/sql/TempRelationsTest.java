package org.wanrep.sql;

import org.junit.jupiter.api.Test;
import org.wanrep.lock.TableSet;

import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class TempRelationsTest {
    @Test
    void createdTemporaryRelations() {
        assertThat(TempRelations.created("CREATE TEMP TABLE t1 (id int)")).containsExactly("t1");
        assertThat(TempRelations.created("create temporary table if not exists \"T2\" as select 1")).containsExactly("T2");
        assertThat(TempRelations.created("CREATE LOCAL TEMP VIEW v AS SELECT 1")).containsExactly("v");
        assertThat(TempRelations.created("CREATE TEMP SEQUENCE s")).containsExactly("s");
        assertThat(TempRelations.created("SELECT * INTO TEMP TABLE t3 FROM x")).containsExactly("t3");
        assertThat(TempRelations.created("CREATE TABLE pg_temp.t4 (a int)")).containsExactly("t4");
        // "temp" as a name is no temporary relation
        assertThat(TempRelations.created("CREATE TABLE weather (temp int, city text)")).isEmpty();
        assertThat(TempRelations.created("INSERT INTO weather (temp) VALUES (3)")).isEmpty();
        assertThat(TempRelations.created("SELECT 'create temp table nope'")).isEmpty();
    }

    @Test
    void mentionsAndSessionLocalWrites() {
        Set<String> temps = Set.of("tmp");
        assertThat(TempRelations.mentioned(List.of("INSERT INTO real_t SELECT * FROM tmp"), temps)).isEqualTo("tmp");
        assertThat(TempRelations.mentioned(List.of("INSERT INTO real_t VALUES ('tmp')"), temps)).isNull();
        assertThat(TempRelations.onlyTemporary(TableSet.of(Set.of(), Set.of("public.tmp")), temps)).isTrue();
        assertThat(TempRelations.onlyTemporary(TableSet.of(Set.of("public.tmp"), Set.of("public.real_t")), temps)).isFalse();
        assertThat(TempRelations.onlyTemporary(TableSet.allTables(), temps)).isFalse();
    }
}
