package org.wanrep.gcs.jgroups;

import org.jgroups.protocols.FD_SOCK2;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.wanrep.gcs.Delivery;
import org.wanrep.gcs.GcsListener;
import org.wanrep.gcs.GcsMessage;
import org.wanrep.gcs.GcsView;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Sites sharing a secret (issue #15): a process with the cluster name and every address but without the
 * secret, or with another one, keeps trying to join a busy encrypted group; it never gets into a view,
 * never delivers anything, and the members' ordered deliveries never pause for it. One group for all.
 */
class GcsEncryptionTest {
    static final List<String> SITES = List.of("site1", "site2", "site3");
    @TempDir static Path dir;
    static Path secret;
    static List<Integer> ports;
    static List<String> hosts = new ArrayList<>();
    static final String CLUSTER = "wanrep-enc-" + System.nanoTime();
    static final Map<String, JGroupsGcs> members = new LinkedHashMap<>();
    static final Map<String, List<Long>> deliveredAt = new LinkedHashMap<>();
    static final List<String> viewChanges = Collections.synchronizedList(new ArrayList<>());

    @BeforeAll static void start() throws Exception {
        secret = GcsSecret.generate(dir.resolve("gcs.secret"));
        ports = GcsSettings.freePorts(SITES.size());
        for (int p : ports) hosts.add("127.0.0.1[" + p + "]");
        for (String s : SITES) {
            List<Long> at = Collections.synchronizedList(new ArrayList<>());
            deliveredAt.put(s, at);
            members.put(s, JGroupsGcs.start(GcsSettings.loopback(CLUSTER, s, SITES, ports, null).withSecretFile(secret), new GcsListener() {
                @Override public void ordered(GcsMessage m, long gsn) { at.add(System.nanoTime()); }
                @Override public void viewChanged(GcsView v) { viewChanges.add(s + ": " + v.members()); }
            }));
        }
        for (JGroupsGcs g : members.values()) g.awaitPrimary(SITES.size(), Duration.ofSeconds(30));
        // a view reaches the listener on the delivery thread, after awaitPrimary may have returned: wait until every
        // member's listener has seen the full view, so that the test counts only view changes that happen during it
        long until = System.nanoTime() + 30_000_000_000L;
        while (!SITES.stream().allMatch(GcsEncryptionTest::listenerSawFullView)) {
            if (System.nanoTime() > until) throw new AssertionError("listeners never saw the full view: " + viewChanges);
            Thread.sleep(10);
        }
    }

    private static boolean listenerSawFullView(String site) {
        synchronized (viewChanges) {
            return viewChanges.stream().anyMatch(v -> v.startsWith(site + ": ") && SITES.stream().allMatch(o -> v.contains(o + "/")));
        }
    }

    @AfterAll static void stop() {
        for (JGroupsGcs g : members.values()) g.close();
    }

    /** A member that knows everything but the secret: pretends to be a restart of site3, so a join would be plausible. */
    private static JGroupsGcs intruder(String name, Path key, AtomicInteger delivered, List<String> views) throws Exception {
        int port = GcsSettings.freePorts(1).get(0);
        GcsSettings s = new GcsSettings(CLUSTER, "site3", name, SITES, null, "127.0.0.1", port, hosts, null, 0, 2, true).withSecretFile(key);
        return JGroupsGcs.start(s, new GcsListener() {
            @Override public void optimistic(GcsMessage m) { delivered.incrementAndGet(); }
            @Override public void ordered(GcsMessage m, long gsn) { delivered.incrementAndGet(); }
            @Override public void reliable(GcsMessage m) { delivered.incrementAndGet(); }
            @Override public void viewChanged(GcsView v) { views.add(name + ": " + v.members()); }
        });
    }

    @Test void intruderWithoutTheSecretIsRefusedAndStallsNothing() throws Exception {
        Path wrong = GcsSecret.generate(dir.resolve("wrong.secret"));
        int viewsBefore = viewChanges.size();
        AtomicBoolean sending = new AtomicBoolean(true);
        AtomicInteger sent = new AtomicInteger();
        List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
        Thread sender = Thread.ofPlatform().daemon().start(() -> {
            int i = 0;
            while (sending.get()) {
                try {
                    members.get(SITES.get(i++ % SITES.size())).multicast(new byte[64], Delivery.AGREED);
                    sent.incrementAndGet();
                } catch (RuntimeException e) {
                    failures.add(e);
                }
                try { Thread.sleep(10); } catch (InterruptedException e) { return; }
            }
        });
        Thread.sleep(1000);

        // two intruders, one in clear text and one with another key, each restarting (a new join attempt) for ~5 s
        AtomicInteger intruderDeliveries = new AtomicInteger();
        List<String> intruderViews = Collections.synchronizedList(new ArrayList<>());
        long tryFrom = System.nanoTime(), tryUntil = tryFrom + 5_000_000_000L;
        List<Thread> tries = new ArrayList<>();
        for (Path key : new Path[]{null, wrong}) {
            tries.add(Thread.ofPlatform().daemon().start(() -> {
                int n = 0;
                while (System.nanoTime() < tryUntil) {
                    try {
                        JGroupsGcs evil = intruder((key == null ? "clear" : "wrongkey") + n++, key, intruderDeliveries, intruderViews);
                        try {
                            Thread.sleep(1500);   // discovery, JOIN, and MERGE3 rounds try meanwhile
                            intruderViews.add("jgroups view " + evil.channel().getView());
                            if (evil.channel().getView().size() != 1) failures.add(new AssertionError("intruder in " + evil.channel().getView()));
                        } finally {
                            evil.close();
                        }
                    } catch (Throwable t) {
                        failures.add(t);
                    }
                }
            }));
        }
        for (Thread t : tries) t.join();
        long tryEnd = System.nanoTime();
        Thread.sleep(500);
        sending.set(false);
        sender.join();

        assertThat(failures).isEmpty();
        // through SERIALIZE and SYM_ENCRYPT every message still arrives once at every member (DONT_LOOPBACK kept)
        long until = System.nanoTime() + 10_000_000_000L;
        while (System.nanoTime() < until && deliveredAt.values().stream().anyMatch(l -> l.size() < sent.get())) Thread.sleep(20);
        Thread.sleep(200);
        for (String s : SITES) assertThat(deliveredAt.get(s)).as(s + " ordered deliveries").hasSize(sent.get());
        assertThat(intruderDeliveries.get()).as("messages an intruder delivered; its views: %s", intruderViews).isZero();
        assertThat(viewChanges.subList(viewsBefore, viewChanges.size())).as("members' view changes while intruders tried").isEmpty();
        for (JGroupsGcs g : members.values()) assertThat(g.channel().getView().size()).isEqualTo(SITES.size());
        for (String s : SITES) {
            List<Long> at;
            synchronized (deliveredAt.get(s)) { at = new ArrayList<>(deliveredAt.get(s)); }
            long prev = tryFrom - 500_000_000L, maxGap = 0;
            int during = 0;
            for (long t : at) {
                if (t < prev) continue;
                if (t > tryEnd + 500_000_000L) break;
                maxGap = Math.max(maxGap, t - prev);
                prev = t;
                during++;
            }
            maxGap = Math.max(maxGap, tryEnd - prev);
            System.out.printf("%s: %d ordered deliveries while intruders tried, longest gap %.0f ms%n", s, during, maxGap / 1e6);
            assertThat(during).as(s + " deliveries while intruders tried").isGreaterThan(100);
            assertThat(maxGap / 1_000_000).as(s + " longest pause in ordered deliveries (ms)").isLessThanOrEqualTo(2000);
        }
    }

    /** FD_SOCK2 took every interface unless told otherwise: no listener of a member may be on the wildcard address. */
    @Test void everyListenerBindsTheConfiguredAddress() throws Exception {
        InetAddress loopback = InetAddress.getByName("127.0.0.1");
        List<Integer> listening = new ArrayList<>(ports);   // the members' TCP ports
        for (JGroupsGcs g : members.values()) {
            FD_SOCK2 fd = g.channel().getProtocolStack().findProtocol(FD_SOCK2.class);
            assertThat(fd.getBindAddress()).isEqualTo(loopback);
            listening.add(fd.getActualBindPort());
        }
        // what the kernel says: each of these ports listens on 127.0.0.1 only
        Map<Integer, List<String>> found = new LinkedHashMap<>();
        for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
            Path p = Path.of(table);
            if (!Files.exists(p)) continue;
            for (String line : Files.readAllLines(p).subList(1, Files.readAllLines(p).size())) {
                String[] f = line.trim().split("\\s+");
                if (!f[3].equals("0A")) continue;   // LISTEN
                int port = Integer.parseInt(f[1].substring(f[1].indexOf(':') + 1), 16);
                if (listening.contains(port)) found.computeIfAbsent(port, k -> new ArrayList<>()).add(f[1].substring(0, f[1].indexOf(':')));
            }
        }
        if (Files.exists(Path.of("/proc/net/tcp"))) {
            assertThat(found.keySet()).containsExactlyInAnyOrderElementsOf(listening);
            for (var e : found.entrySet()) assertThat(e.getValue()).as("addresses port %d listens on", e.getKey()).containsOnly("0100007F");
        }
    }

    @Test void aSecretOthersCanReadOrThatIsNoKeyIsRefused() throws Exception {
        Path open = GcsSecret.generate(dir.resolve("open.secret"));
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(open))).isEqualTo("rw-------");
        GcsSecret.load(open);
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rw-r--r--"));
        assertThatThrownBy(() -> GcsSecret.load(open)).isInstanceOf(IOException.class).hasMessageContaining("owner only");
        Path junk = dir.resolve("junk.secret");
        Files.createFile(junk, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        Files.writeString(junk, "correct horse battery staple\n");
        assertThatThrownBy(() -> GcsSecret.load(junk)).isInstanceOf(IOException.class);
    }
}
