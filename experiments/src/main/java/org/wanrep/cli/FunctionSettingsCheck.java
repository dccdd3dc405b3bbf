package org.wanrep.cli;

import org.wanrep.config.Config;
import org.wanrep.lock.TableSet;
import org.wanrep.sql.Classifiers;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Whether a cluster's configuration declares the table sets a workload's stored functions need
 * ({@code functions.NAME.reads/writes}), read the way each site reads them. A function without a
 * configured set is <em>missing</em>: the middleware then locks every table for each call, which is
 * correct but serializes the workload. A configured set that lacks a table the workload declares is
 * <em>under-declared</em>: calls would not lock everything they touch, and replicas can diverge.
 */
record FunctionSettingsCheck(int functions, List<String> missing, List<String> underDeclared) {
    // functions: how many the workload configures; missing: their names, with the sites lacking them when not all;
    // underDeclared: one line per function and site
    boolean complete() { return missing.isEmpty() && underDeclared.isEmpty(); }

    /** {@code needed}: the workload's settings; {@code cluster}: the configuration every site of {@code sites} was started with. */
    static FunctionSettingsCheck of(Map<String, String> needed, Config cluster, List<String> sites) {
        Map<String, TableSet> want = new TreeMap<>(Classifiers.configuredFunctions(Config.build(needed, List.of())));
        Map<String, List<String>> missingAt = new TreeMap<>();
        List<String> under = new ArrayList<>();
        for (String site : sites) {
            Map<String, TableSet> have = Classifiers.configuredFunctions(cluster.forSite(site));
            for (Map.Entry<String, TableSet> e : want.entrySet()) {
                String fn = e.getKey();
                // the classifier looks a call up as written, bare, then in schema public
                TableSet h = have.get(fn);
                if (h == null && !fn.contains(".")) h = have.get("public." + fn);
                if (h == null && fn.startsWith("public.")) h = have.get(fn.substring("public.".length()));
                if (h == null) missingAt.computeIfAbsent(fn, k -> new ArrayList<>()).add(site);
                else if (!covers(h, e.getValue()))
                    under.add("functions." + fn + (sites.size() > 1 ? " at site " + site : "") + " is " + h + ", the workload needs " + e.getValue());
            }
        }
        List<String> missing = new ArrayList<>();
        missingAt.forEach((fn, at) -> missing.add(fn + (sites.size() > 1 && at.size() < sites.size() ? " (at " + String.join(", ", at) + ")" : "")));
        return new FunctionSettingsCheck(want.size(), List.copyOf(missing), List.copyOf(under));
    }

    /** Locking {@code have} is at least as strong as locking {@code need}. */
    static boolean covers(TableSet have, TableSet need) {
        if (have.all()) return true;
        if (need.all()) return false;
        Set<String> touched = new HashSet<>(have.reads());
        touched.addAll(have.writes());
        return have.writes().containsAll(need.writes()) && touched.containsAll(need.reads());
    }
}
