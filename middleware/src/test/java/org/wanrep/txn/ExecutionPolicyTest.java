package org.wanrep.txn;

import org.junit.jupiter.api.Test;
import org.wanrep.lock.TableSet;

import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ExecutionPolicyTest {
    static final List<String> SITES = List.of("montreal", "boston", "chicago");
    static final List<String> VIEW = List.of("montreal/1", "boston/1", "chicago/1");

    private static TxnRequest req(String origin, TableSet t) {
        return new TxnRequest(new RequestId(origin, 1), TxnRequest.Kind.AUTOCOMMIT, t, "db", List.of(), 0, 0, Map.of()).shippingWriteSet();
    }

    private static TableSet writes(String... t) { return TableSet.of(Set.of(), Set.of(t)); }

    @Test
    void localCopyExecutesAtTheOriginPrimaryCopyAtThePrimaryOfMostWrittenTables() {
        ExecutionPolicy local = new ExecutionPolicy(ExecutionPolicy.Kind.LOCAL_COPY, SITES, Map.of());
        assertThat(local.executor(req("chicago", writes("public.a")), VIEW, VIEW)).isEqualTo("chicago/1");
        ExecutionPolicy pc = new ExecutionPolicy(ExecutionPolicy.Kind.PRIMARY_COPY, SITES,
                Map.of("public.a", "boston", "public.b", "chicago"));
        assertThat(pc.executor(req("montreal", writes("public.b", "public.a")), VIEW, VIEW)).isEqualTo("boston/1");   // tie: first in site order
        assertThat(pc.executor(req("chicago", writes("public.b", "public.a")), VIEW, VIEW)).isEqualTo("chicago/1");   // tie: the origin is among them
        assertThat(pc.executor(req("montreal", writes("public.b")), VIEW, VIEW)).isEqualTo("chicago/1");
        assertThat(pc.executor(req("chicago", TableSet.allTables()), VIEW, VIEW)).isEqualTo("chicago/1");           // every table: the origin
    }

    @Test
    void theSiteWithMostWrittenTablesExecutesNotTheFirstName() {
        ExecutionPolicy pc = new ExecutionPolicy(ExecutionPolicy.Kind.PRIMARY_COPY, SITES,
                Map.of("public.a", "montreal", "public.b", "chicago", "public.c", "chicago"));
        assertThat(pc.executor(req("boston", writes("public.a", "public.b", "public.c")), VIEW, VIEW)).isEqualTo("chicago/1");
    }

    @Test
    void unconfiguredTablesAreSpreadOverTheSitesAlikeEverywhere() {
        ExecutionPolicy pc = new ExecutionPolicy(ExecutionPolicy.Kind.PRIMARY_COPY, SITES, Map.of());
        java.util.Map<String, Integer> count = new java.util.HashMap<>();
        for (int i = 0; i < 30; i++) count.merge(pc.primaryOf("public.synth_" + i), 1, Integer::sum);
        assertThat(count.keySet()).containsExactlyInAnyOrderElementsOf(SITES);
        assertThat(new ExecutionPolicy(ExecutionPolicy.Kind.PRIMARY_COPY, SITES, Map.of()).primaryOf("public.t")).isEqualTo(pc.primaryOf("public.t"));
    }

    @Test
    void aDepartedExecutorIsReplacedByTheFirstConfiguredContinuingSite() {
        ExecutionPolicy local = new ExecutionPolicy(ExecutionPolicy.Kind.LOCAL_COPY, SITES, Map.of());
        TxnRequest fromMontreal = req("montreal", writes("public.a"));
        assertThat(local.executor(fromMontreal, VIEW, List.of("boston/1", "chicago/1"))).isEqualTo("boston/1");
        // montreal came back as a new incarnation: it does not hold the transaction, boston re-executes it
        assertThat(local.executor(fromMontreal, VIEW, List.of("montreal/2", "boston/1", "chicago/1"))).isEqualTo("boston/1");
        // a joiner never takes over
        assertThat(local.executor(fromMontreal, VIEW, List.of("montreal/2", "chicago/1", "boston/7"))).isEqualTo("chicago/1");
        assertThatThrownBy(() -> local.executor(fromMontreal, VIEW, List.of("montreal/2"))).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aConfigurationChangeSpreadsOverTheNewSitesAndDropsAPrimaryThatLeft() {
        ExecutionPolicy pc = new ExecutionPolicy(ExecutionPolicy.Kind.PRIMARY_COPY, List.of("a", "b", "c"), Map.of("public.t", "c"));
        ExecutionPolicy four = pc.withSites(List.of("a", "b", "c", "d"));
        assertThat(four.kind()).isEqualTo(ExecutionPolicy.Kind.PRIMARY_COPY);
        assertThat(pc.primaryOf("public.x")).isEqualTo("a");   // String hash of "public.x": 0 mod 3, 3 mod 4
        assertThat(four.primaryOf("public.x")).isEqualTo("d");
        assertThat(four.primaryOf("public.t")).isEqualTo("c");
        ExecutionPolicy withoutC = four.withSites(List.of("a", "b", "d"));
        assertThat(withoutC.primaryOf("public.t")).isIn("a", "b", "d");   // its configured primary left: spread by hash
        assertThat(withoutC.primaryOf("public.t")).isEqualTo(new ExecutionPolicy(ExecutionPolicy.Kind.PRIMARY_COPY, List.of("a", "b", "d"), Map.of()).primaryOf("public.t"));
    }

    @Test
    void aPrimaryMustBeASite() {
        assertThatThrownBy(() -> new ExecutionPolicy(ExecutionPolicy.Kind.PRIMARY_COPY, SITES, Map.of("public.a", "paris")))
                .hasMessageContaining("paris");
    }
}
