package org.wanrep.frontend;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs PostgreSQL's own client programs (psql, pgbench) against a port, as a user would. */
public final class ClientTools {
    private ClientTools() {}

    public record Result(int exit, String output) {}

    public static Path bin(String name) {
        String env = System.getenv("WANREP_PG_BIN");
        for (Path p : List.of(env == null ? Path.of("/nonexistent") : Path.of(env), Path.of("/usr/lib/postgresql/15/bin"), Path.of("/usr/bin")))
            if (Files.isExecutable(p.resolve(name))) return p.resolve(name);
        throw new IllegalStateException(name + " not found: install postgresql-client-15");
    }

    public static Result run(List<String> cmd, String stdin, int timeoutS) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("PGCONNECT_TIMEOUT", "10");
        Process p = pb.start();
        if (stdin != null) p.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
        p.getOutputStream().close();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(timeoutS, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException(cmd + " did not finish in " + timeoutS + " s");
        }
        return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8));
    }

    public static Result psql(int port, String script) throws IOException, InterruptedException {
        return run(List.of(bin("psql").toString(), "-X", "-h", "127.0.0.1", "-p", Integer.toString(port), "-U", "postgres", "-d", "postgres",
                "-v", "ON_ERROR_STOP=0", "-f", "-"), script, 120);
    }

    /** The transactions a pgbench run reports processed (acknowledged to it). */
    public static long processed(Result pgbench) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("number of transactions actually processed: (\\d+)").matcher(pgbench.output());
        if (!m.find()) throw new IllegalStateException("no count of processed transactions in pgbench's output: " + pgbench.output());
        return Long.parseLong(m.group(1));
    }

    public static Result pgbench(int port, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(bin("pgbench").toString(), "-h", "127.0.0.1", "-p", Integer.toString(port), "-U", "postgres"));
        cmd.addAll(List.of(args));
        cmd.add("postgres");
        return run(cmd, null, 300);
    }
}
