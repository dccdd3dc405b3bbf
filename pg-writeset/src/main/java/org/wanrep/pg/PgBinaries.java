package org.wanrep.pg;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Where the PostgreSQL server programs are: {@code WANREP_PG_BIN}, else Debian's /usr/lib/postgresql/N/bin. */
public record PgBinaries(Path bin) {
    public Path initdb() { return bin.resolve("initdb"); }
    public Path pgCtl() { return bin.resolve("pg_ctl"); }
    public Path postgres() { return bin.resolve("postgres"); }

    /**
     * Whether this server knows a configuration parameter. Needed because minor releases add some:
     * 15.20 and later refuse output plugins not listed in {@code output_plugin_libraries}, a setting
     * that older servers reject at startup.
     */
    public boolean knowsSetting(String name) {
        try {
            Process p = new ProcessBuilder(postgres().toString(), "--describe-config").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            p.waitFor();
            return out.lines().anyMatch(l -> l.startsWith(name + "\t"));
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    public static PgBinaries locate() {
        List<Path> candidates = new ArrayList<>();
        String env = System.getenv("WANREP_PG_BIN");
        if (env != null && !env.isBlank()) candidates.add(Path.of(env));
        for (String v : List.of("15", "16", "17", "14")) candidates.add(Path.of("/usr/lib/postgresql", v, "bin"));
        for (Path p : candidates)
            if (Files.isExecutable(p.resolve("initdb")) && Files.isExecutable(p.resolve("pg_ctl"))) return new PgBinaries(p);
        throw new IllegalStateException("PostgreSQL server binaries (initdb, pg_ctl) not found in " + candidates
                + ": install postgresql-15 and postgresql-15-wal2json (./wanrep setup does it as root), or set WANREP_PG_BIN");
    }
}
