package org.wanrep.cluster;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * {@code DIR/cluster.json}: where each site of a local cluster runs. The documented fields are
 * {@code name, proxy_host, proxy_port, pg_host, pg_port}; the rest lets {@code cluster down/status}
 * find the processes again.
 */
public record ClusterLayout(List<SiteEntry> sites) {
    public record SiteEntry(String name, String proxy_host, int proxy_port, String pg_host, int pg_port,
                            int gcs_port, String data_dir, long middleware_pid, String log) {}

    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    public static Path file(Path dir) { return dir.resolve("cluster.json"); }

    /** The configuration every site of a cluster made by {@code cluster up} was started with. */
    public static Path configFile(Path dir) { return dir.resolve("wanrep.properties"); }

    public void write(Path dir) throws IOException {
        Files.createDirectories(dir);
        JSON.writeValue(file(dir).toFile(), this);
    }

    public static ClusterLayout read(Path dir) throws IOException {
        Path f = file(dir);
        if (!Files.isRegularFile(f)) throw new IOException("no cluster in " + dir + " (" + f + " is missing): start one with 'wanrep cluster up --dir " + dir + "'");
        return JSON.readValue(f.toFile(), ClusterLayout.class);
    }
}
