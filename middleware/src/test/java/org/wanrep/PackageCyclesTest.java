package org.wanrep;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The middleware's packages depend on each other one way only (issue #12: frontend <-> sql and
 * frontend <-> exec were cycles). Reads the sources under src/main/java: every reference to
 * {@code org.wanrep.X} in code (imports and qualified names; comments and string literals, such as
 * a class name passed to a child JVM, do not count) is an edge from the file's package to X;
 * any strongly connected set of two or more packages fails the test, named with its edges.
 */
class PackageCyclesTest {
    private static final Pattern PACKAGE = Pattern.compile("(?m)^package\\s+org\\.wanrep\\.([a-z0-9_]+)");
    private static final Pattern REFERENCE = Pattern.compile("\\borg\\.wanrep\\.([a-z0-9_]+)\\.");

    @Test
    void middlewarePackagesHaveNoCycles() throws IOException {
        Path root = Path.of(System.getProperty("wanrep.sources", "src/main/java"));
        Map<String, Set<String>> deps = dependencies(root);
        assertThat(deps).containsKeys("frontend", "sql", "exec");   // the sources were found
        List<Set<String>> cycles = cycles(deps);
        StringBuilder why = new StringBuilder();
        for (Set<String> c : cycles) {
            why.append("cycle ").append(c).append(':');
            for (String p : c) for (String q : deps.get(p)) if (c.contains(q)) why.append(' ').append(p).append("->").append(q);
            why.append('\n');
        }
        assertThat(cycles).as(why.toString()).isEmpty();
    }

    @Test
    void findsACycle() {
        Map<String, Set<String>> deps = new TreeMap<>(Map.of("a", Set.of("b"), "b", Set.of("c"), "c", Set.of("a"), "d", Set.of("a")));
        assertThat(cycles(deps)).containsExactly(Set.of("a", "b", "c"));
    }

    @Test
    void commentsAndStringsAreNoDependency() {
        String code = "package org.wanrep.x;\n// org.wanrep.y.A\n/* org.wanrep.z.B */ String s = \"org.wanrep.w.C\"; char q = '\"'; org.wanrep.v.D d;";
        assertThat(codeOnly(code)).doesNotContain("org.wanrep.y", "org.wanrep.z", "org.wanrep.w").contains("org.wanrep.v.D");
    }

    /** Package -> the middleware packages its code names. */
    static Map<String, Set<String>> dependencies(Path root) throws IOException {
        Map<String, Set<String>> deps = new TreeMap<>();
        List<Path> files;
        try (Stream<Path> s = Files.walk(root)) { files = s.filter(p -> p.toString().endsWith(".java")).toList(); }
        for (Path f : files) {
            String code = codeOnly(Files.readString(f));
            Matcher pm = PACKAGE.matcher(code);
            if (!pm.find()) continue;
            deps.computeIfAbsent(pm.group(1), k -> new TreeSet<>());
        }
        for (Path f : files) {
            String code = codeOnly(Files.readString(f));
            Matcher pm = PACKAGE.matcher(code);
            if (!pm.find()) continue;
            String from = pm.group(1);
            Matcher m = REFERENCE.matcher(code);
            while (m.find()) {
                String to = m.group(1);
                if (!to.equals(from) && deps.containsKey(to)) deps.get(from).add(to);   // other modules' packages cannot close a cycle here
            }
        }
        return deps;
    }

    /** Java source without comments and string/char literals (text blocks included). */
    static String codeOnly(String s) {
        StringBuilder b = new StringBuilder(s.length());
        int n = s.length();
        for (int i = 0; i < n; ) {
            char c = s.charAt(i);
            if (s.startsWith("//", i)) { int j = s.indexOf('\n', i); i = j < 0 ? n : j; }
            else if (s.startsWith("/*", i)) { int j = s.indexOf("*/", i + 2); i = j < 0 ? n : j + 2; b.append(' '); }
            else if (s.startsWith("\"\"\"", i)) { int j = s.indexOf("\"\"\"", i + 3); i = j < 0 ? n : j + 3; b.append("\"\""); }
            else if (c == '"' || c == '\'') {
                int j = i + 1;
                while (j < n && s.charAt(j) != c) j += s.charAt(j) == '\\' ? 2 : 1;
                i = j + 1;
                b.append(c).append(c);
            } else { b.append(c); i++; }
        }
        return b.toString();
    }

    /** Strongly connected sets of two or more packages (Tarjan). */
    static List<Set<String>> cycles(Map<String, Set<String>> deps) {
        Map<String, Integer> index = new HashMap<>(), low = new HashMap<>();
        Deque<String> stack = new ArrayDeque<>();
        Set<String> onStack = new java.util.HashSet<>();
        List<Set<String>> out = new ArrayList<>();
        int[] next = {0};
        for (String v : deps.keySet()) if (!index.containsKey(v)) strongConnect(v, deps, index, low, stack, onStack, out, next);
        return out;
    }

    private static void strongConnect(String v, Map<String, Set<String>> deps, Map<String, Integer> index, Map<String, Integer> low,
                                      Deque<String> stack, Set<String> onStack, List<Set<String>> out, int[] next) {
        index.put(v, next[0]);
        low.put(v, next[0]++);
        stack.push(v);
        onStack.add(v);
        for (String w : deps.getOrDefault(v, Set.of())) {
            if (!index.containsKey(w)) {
                strongConnect(w, deps, index, low, stack, onStack, out, next);
                low.put(v, Math.min(low.get(v), low.get(w)));
            } else if (onStack.contains(w)) low.put(v, Math.min(low.get(v), index.get(w)));
        }
        if (low.get(v).equals(index.get(v))) {
            Set<String> scc = new TreeSet<>();
            String w;
            do { w = stack.pop(); onStack.remove(w); scc.add(w); } while (!w.equals(v));
            if (scc.size() > 1) out.add(scc);
        }
    }
}
