package org.wanrep.pg;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A PostgreSQL cluster of our own: {@code initdb} into a directory, configured for logical decoding
 * (wal_level=logical, slots and senders for wal2json), listening on 127.0.0.1 at a free port,
 * started and stopped with {@code pg_ctl}. Superuser {@code postgres}, trust on loopback, as a fresh
 * initdb. Root cannot run PostgreSQL: as root, the cluster is owned by and run as user "postgres".
 */
public final class LocalPostgres implements AutoCloseable {
    private final PgBinaries bin;
    private final Path dataDir;
    private final int port;
    private final boolean temporary;
    private boolean running;

    private LocalPostgres(PgBinaries bin, Path dataDir, int port, boolean temporary) {
        this.bin = bin;
        this.dataDir = dataDir;
        this.port = port;
        this.temporary = temporary;
    }

    /** Initializes a new cluster in {@code dataDir} (must not exist or be empty) and starts it. */
    public static LocalPostgres create(Path dataDir, int port, boolean fastUnsafe) throws IOException {
        PgBinaries bin = PgBinaries.locate();
        LocalPostgres pg = new LocalPostgres(bin, dataDir.toAbsolutePath(), port, false);
        pg.initdb(fastUnsafe);
        pg.start();
        return pg;
    }

    /** An existing cluster directory (created by {@link #create}), not started. */
    public static LocalPostgres existing(Path dataDir, int port) {
        return new LocalPostgres(PgBinaries.locate(), dataDir.toAbsolutePath(), port, false);
    }

    /** A throw-away cluster for tests: temporary directory, free port, fsync off; deleted on close. */
    public static LocalPostgres startTemporary() throws IOException {
        PgBinaries bin = PgBinaries.locate();
        Path dir = Files.createTempDirectory("wanrep-pg-");
        LocalPostgres pg = new LocalPostgres(bin, dir.resolve("data"), freePort(), true);
        pg.shareWithPostgresUser(dir);
        // a copy of one initdb per process: initdb takes ~1 s, the copy ~0.05 s, and tests start hundreds of servers
        run(pg.asPostgres(List.of("cp", "-a", template(bin).toString(), pg.dataDir.toString())), "copy of the initdb template");
        pg.configure(true);
        pg.start();
        return pg;
    }

    /**
     * {@code n} throw-away clusters ({@link #startTemporary}) started side by side, each waiting for its own postmaster;
     * all or none: if one fails, those started are closed and the first failure is thrown.
     */
    public static List<LocalPostgres> startTemporary(int n) throws IOException {
        List<java.util.concurrent.CompletableFuture<LocalPostgres>> starting = new ArrayList<>();
        for (int i = 0; i < n; i++)
            starting.add(java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                try {
                    return startTemporary();
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }, r -> Thread.ofPlatform().start(r)));
        List<LocalPostgres> out = new ArrayList<>();
        IOException failed = null;
        for (var f : starting) {
            try {
                out.add(f.join());
            } catch (java.util.concurrent.CompletionException e) {
                IOException cause = e.getCause() instanceof java.io.UncheckedIOException u ? u.getCause()
                        : new IOException("starting a temporary PostgreSQL failed: " + e.getCause(), e.getCause());
                if (failed == null) failed = cause;
            }
        }
        if (failed != null) {
            for (LocalPostgres pg : out) {
                try {
                    pg.close();
                } catch (IOException e) {
                    failed.addSuppressed(e);
                }
            }
            throw failed;
        }
        return out;
    }

    /** The pid of the postmaster running in {@code dataDir} (first line of postmaster.pid), or -1 if none is recorded. */
    public static long postmasterPid(Path dataDir) {
        try {
            List<String> lines = Files.readAllLines(dataDir.resolve("postmaster.pid"));
            return lines.isEmpty() ? -1 : Long.parseLong(lines.get(0).trim());
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    private static Path template;

    /**
     * The data directory of this process's temporary servers before configuration, made by initdb once and copied by
     * each (same catalog, same system identifier: nothing here uses the latter, and no two of them stream WAL to each
     * other). Deleted when the process exits.
     */
    private static synchronized Path template(PgBinaries bin) throws IOException {
        if (template != null) return template;
        Path dir = Files.createTempDirectory("wanrep-pg-template-");
        LocalPostgres t = new LocalPostgres(bin, dir.resolve("data"), 0, true);
        t.shareWithPostgresUser(dir);
        t.runInitdb();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                deleteTree(dir);
            } catch (IOException e) {
                // a temporary directory left behind
            }
        }));
        template = t.dataDir;
        return template;
    }

    public int port() { return port; }
    public String host() { return "127.0.0.1"; }
    public Path dataDir() { return dataDir; }
    public boolean isRunning() { return running; }

    public String jdbcUrl(String database) { return "jdbc:postgresql://127.0.0.1:" + port + "/" + database; }

    /** A JDBC connection as superuser postgres. */
    public Connection connect(String database) throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", "postgres");
        return DriverManager.getConnection(jdbcUrl(database), p);
    }

    public Connection connect() throws SQLException { return connect("postgres"); }

    private static boolean isRoot() {
        return "root".equals(System.getProperty("user.name"));
    }

    private void shareWithPostgresUser(Path dir) throws IOException {
        if (isRoot()) run(List.of("chown", "-R", "postgres:postgres", dir.toString()), "chown");
    }

    private void initdb(boolean fastUnsafe) throws IOException {
        runInitdb();
        configure(fastUnsafe);
    }

    private void runInitdb() throws IOException {
        Files.createDirectories(dataDir.getParent());
        if (isRoot()) {
            Files.createDirectories(dataDir);
            run(List.of("chown", "-R", "postgres:postgres", dataDir.getParent().toString()), "chown");
        }
        run(asPostgres(List.of(bin.initdb().toString(), "-D", dataDir.toString(), "-U", "postgres", "--auth=trust",
                "-E", "UTF8", "--locale=C", "--no-instructions")), "initdb");
    }

    /** The server's settings (port, socket directory, logical decoding, limits), in postgresql.auto.conf. */
    private void configure(boolean fastUnsafe) throws IOException {
        List<String> conf = new ArrayList<>(List.of(
                "listen_addresses = '127.0.0.1'",
                "port = " + port,
                "unix_socket_directories = '" + dataDir + "'",
                "wal_level = logical",
                "max_replication_slots = 20",
                "max_wal_senders = 20",
                "max_slot_wal_keep_size = '1GB'",
                "max_connections = 200",
                "max_prepared_transactions = 200",   // certified interactive blocks are prepared until every site decided
                "shared_buffers = '64MB'",
                "logging_collector = off",
                "log_min_messages = warning"));
        // PostgreSQL 15.20+ only lets listed libraries act as output plugins; wal2json captures write sets
        if (bin.knowsSetting("output_plugin_libraries"))
            conf.add("output_plugin_libraries = 'pgoutput, test_decoding, wal2json'");
        // not synchronous_commit=off: logical decoding only reads flushed WAL, so it would delay capture
        if (fastUnsafe) conf.addAll(List.of("fsync = off", "full_page_writes = off"));
        Files.writeString(dataDir.resolve("postgresql.auto.conf"), String.join("\n", conf) + "\n", StandardCharsets.UTF_8);
        if (isRoot()) run(List.of("chown", "postgres:postgres", dataDir.resolve("postgresql.auto.conf").toString()), "chown");
    }

    public synchronized void start() throws IOException {
        if (running) return;
        run(asPostgres(List.of(bin.pgCtl().toString(), "-D", dataDir.toString(), "-l", dataDir.resolve("server.log").toString(),
                "-w", "-t", "60", "start")), "pg_ctl start");
        running = true;
    }

    public synchronized void stop() throws IOException {
        if (!running) return;
        run(asPostgres(List.of(bin.pgCtl().toString(), "-D", dataDir.toString(), "-w", "-t", "60", "-m", "fast", "stop")), "pg_ctl stop");
        running = false;
    }

    /** Stops a server found running in {@code dataDir} (started by another process). */
    public void stopIfRunning() throws IOException {
        if (!Files.exists(dataDir.resolve("postmaster.pid"))) return;
        running = true;
        stop();
    }

    /**
     * Starts the server in {@code dataDir} unless one runs there already (after a crash of PostgreSQL, say). Right after
     * a postmaster was killed, {@code pg_ctl status} may still find its process (not reaped yet): a server that says it
     * runs must also accept connections, or this waits (up to a minute) until it does or is gone, and then starts it.
     */
    public synchronized void startIfStopped() throws IOException {
        long end = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(60);
        try {
            while (pgCtlStatus() == 0) {   // pg_ctl status: 0 running, 3 not running
                if (accepts()) {
                    running = true;
                    return;
                }
                if (System.nanoTime() > end)
                    throw new IOException("PostgreSQL in " + dataDir + " is reported running but accepts no connection on port " + port);
                Thread.sleep(200);   // a killed postmaster not reaped yet, or one still recovering
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
        running = false;
        start();
    }

    private int pgCtlStatus() throws IOException, InterruptedException {
        Process p = new ProcessBuilder(asPostgres(List.of(bin.pgCtl().toString(), "-D", dataDir.toString(), "status")))
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        return p.waitFor();
    }

    /** Whether something listens on the server's port (a killed postmaster does not). */
    private boolean accepts() {
        try (java.net.Socket s = new java.net.Socket()) {
            s.connect(new java.net.InetSocketAddress(host(), port), 1000);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Stops like a crash: immediate shutdown, no checkpoint. */
    public synchronized void crash() throws IOException {
        if (!running) return;
        run(asPostgres(List.of(bin.pgCtl().toString(), "-D", dataDir.toString(), "-m", "immediate", "stop")), "pg_ctl stop -m immediate");
        running = false;
    }

    @Override public void close() throws IOException {
        try {
            stop();
        } finally {
            if (temporary) deleteTree(dataDir.getParent());
        }
    }

    private List<String> asPostgres(List<String> cmd) {
        if (!isRoot()) return cmd;
        List<String> out = new ArrayList<>(List.of("runuser", "-u", "postgres", "--"));
        out.addAll(cmd);
        return out;
    }

    private static void run(List<String> cmd, String what) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("LC_ALL", "C");
        Process p = pb.start();
        String out;
        try {
            out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(what + " timed out: " + String.join(" ", cmd));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(what + " interrupted", e);
        }
        if (p.exitValue() != 0)
            throw new IOException(what + " failed (exit " + p.exitValue() + "): " + String.join(" ", cmd) + "\n" + out.strip());
    }

    /**
     * A port free now, drawn below the kernel's ephemeral range: a port the kernel hands out to outgoing
     * connections (as {@code bind(0)} does) can be taken by any client socket before our server binds it.
     */
    public static int freePort() throws IOException {
        // 10000-19999: the group-communication ports of in-process tests are drawn above (GcsSettings.freePorts), and
        // a port handed out in this process is not handed out again (it may not be bound yet)
        int[] range = ephemeralRange();
        int low = 10_000, high = Math.min(20_000, Math.max(low + 1000, range[0]));
        java.util.concurrent.ThreadLocalRandom r = java.util.concurrent.ThreadLocalRandom.current();
        for (int i = 0; i < 1000; i++) {
            int p = low + r.nextInt(high - low);
            if (p >= range[0] && p <= range[1]) continue;
            if (!HANDED_OUT.add(p)) continue;
            try (ServerSocket s = new ServerSocket()) {
                s.setReuseAddress(false);
                s.bind(new InetSocketAddress("127.0.0.1", p));
                return p;
            } catch (IOException busy) {
                // taken: draw again
            }
        }
        throw new IOException("no free port found in " + low + "-" + high);
    }

    private static final java.util.Set<Integer> HANDED_OUT = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /** The kernel's ephemeral port range (Linux), or the IANA default elsewhere. (readString reads 1 byte of this procfs file on JDK 25.) */
    static int[] ephemeralRange() {
        try {
            String[] f = Files.readAllLines(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).get(0).trim().split("\\s+");
            return new int[]{Integer.parseInt(f[0]), Integer.parseInt(f[1])};
        } catch (IOException | RuntimeException e) {
            return new int[]{49152, 65535};
        }
    }

    private static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) return;
        try (Stream<Path> s = Files.walk(root)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
        }
    }

    @Override public String toString() { return "postgres@127.0.0.1:" + port + " (" + dataDir + ")"; }
}
