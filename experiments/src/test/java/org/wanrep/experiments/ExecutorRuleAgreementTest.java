package org.wanrep.experiments;

import org.junit.jupiter.api.Test;
import org.wanrep.emulator.synthetic.SyntheticWorkload;
import org.wanrep.lock.TableSet;
import org.wanrep.txn.ExecutionPolicy;
import org.wanrep.txn.RequestId;
import org.wanrep.txn.TxnRequest;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The emulator labels a synthetic update a local or a remote write by the site it expects to execute
 * it; that must be the site the middleware's primary-copy rule picks, or figure 3's LW/RW split is wrong.
 */
class ExecutorRuleAgreementTest {
    @Test
    void theEmulatorsExecutorIsTheMiddlewares() {
        long seed = Long.getLong("wanrep.rule.seed", new Random().nextLong());
        System.out.println("executor rule agreement seed " + seed);
        Random r = new Random(seed);
        for (int run = 0; run < 2000; run++) {
            List<String> sites = List.of("s1", "s2", "s3", "s4", "s5", "s6").subList(0, 2 + r.nextInt(5));
            int tables = 1 + r.nextInt(12);
            Map<String, String> primaries = SyntheticWorkload.roundRobinPrimaries(tables, sites);
            Map<String, String> configured = new HashMap<>();
            primaries.forEach((t, s) -> configured.put("public." + t, s));
            ExecutionPolicy policy = new ExecutionPolicy(ExecutionPolicy.Kind.PRIMARY_COPY, sites, configured);
            TreeSet<String> written = new TreeSet<>();
            Set<String> qualified = new HashSet<>();
            for (int k = 0; k <= r.nextInt(10); k++) {
                String t = SyntheticWorkload.table(1 + r.nextInt(tables));
                written.add(t);
                qualified.add("public." + t);
            }
            String origin = sites.get(r.nextInt(sites.size()));
            TxnRequest req = new TxnRequest(new RequestId(origin, run), TxnRequest.Kind.AUTOCOMMIT, TableSet.of(Set.of(), qualified), "postgres",
                    List.of(), 0, 0, Map.of()).shippingWriteSet();
            assertThat(SyntheticWorkload.executorSite(written, primaries, origin, sites))
                    .as("seed %d run %d: %s written at %s", seed, run, written, origin).isEqualTo(policy.preferredSite(req));
        }
    }
}
