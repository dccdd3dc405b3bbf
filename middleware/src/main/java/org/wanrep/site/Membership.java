package org.wanrep.site;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.wanrep.gcs.Delivery;
import org.wanrep.gcs.GcsListener;
import org.wanrep.gcs.GcsMessage;
import org.wanrep.gcs.GcsView;
import org.wanrep.gcs.MsgId;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;

/**
 * The configured sites as the total order last set them, at one site: kept in {@code SITE.sites} next to the
 * ordered log (GSN and sites; written and fsynced, then renamed over the old file, when a change is delivered
 * or a joiner learns the set), so that a restarted site starts from the group's set rather than from files
 * an operator may not have updated everywhere. A site that delivers its own removal stops.
 */
final class Membership implements GcsListener {
    private static final Logger LOG = LoggerFactory.getLogger(Membership.class);

    /** A persisted set: the GSN of the change that set it and the sites. */
    record Recorded(long gsn, List<String> sites) {}

    private final String site;
    private final Path file;   // null: not persisted (no rejoin.log_dir)
    private final GcsListener next;
    private volatile Consumer<String> onRemoved = reason -> { };
    /** Told of every change first (the engine's execution policy: the listeners in between need not pass it on). */
    private volatile java.util.function.BiConsumer<List<String>, Long> onChanged = (s, g) -> { };

    Membership(String site, Path file, GcsListener next) {
        this.site = site;
        this.file = file;
        this.next = next;
    }

    static Path fileIn(String logDir, String site) {
        return logDir == null || logDir.isBlank() ? null : Path.of(logDir).resolve(site + ".sites");
    }

    /** The set recorded in {@code file}, or null if there is none. */
    static Recorded read(Path file) {
        if (file == null || !Files.exists(file)) return null;
        try {
            String[] parts = Files.readString(file, StandardCharsets.UTF_8).trim().split("\t");
            if (parts.length != 2) throw new IOException("expected 'GSN<TAB>site,site,...'");
            return new Recorded(Long.parseLong(parts[0]), List.copyOf(Arrays.asList(parts[1].split(","))));
        } catch (IOException | RuntimeException e) {
            throw new IllegalStateException("cannot read the configured sites in " + file + ": " + e.getMessage(), e);
        }
    }

    void onRemoved(Consumer<String> c) { onRemoved = c; }

    void onChanged(java.util.function.BiConsumer<List<String>, Long> c) { onChanged = c; }

    @Override public void sitesChanged(List<String> sites, long gsn) {
        if (file != null) write(sites, gsn);
        LOG.info("site {}: configured sites are {} from GSN {}", site, sites, gsn);
        onChanged.accept(sites, gsn);
        next.sitesChanged(sites, gsn);
        if (!sites.contains(site)) onRemoved.accept("site " + site + " was removed from the cluster at GSN " + gsn);
    }

    private void write(List<String> sites, long gsn) {
        try {
            Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
            Files.writeString(tmp, gsn + "\t" + String.join(",", sites) + "\n", StandardCharsets.UTF_8);
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) { ch.force(true); }
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            // thrown on the delivery thread: the site stops (fail-stop) rather than forget the set it follows
            throw new UncheckedIOException("cannot record the configured sites in " + file, e);
        }
    }

    @Override public void optimistic(GcsMessage m) { next.optimistic(m); }
    @Override public void ordered(GcsMessage m, long gsn) { next.ordered(m, gsn); }
    @Override public void reliable(GcsMessage m) { next.reliable(m); }
    @Override public void viewChanged(GcsView view) { next.viewChanged(view); }
    @Override public void undeliverable(MsgId id, Delivery delivery, String reason) { next.undeliverable(id, delivery, reason); }
}
