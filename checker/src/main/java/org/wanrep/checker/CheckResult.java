package org.wanrep.checker;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * What the checker found: transaction counts by outcome, anomaly counts by type (all of them) and up to a few
 * examples of each type in {@code anomalies}. {@code lost} is counted apart from the other anomalies.
 * {@code searchTruncated} says the cycle search ran out of its budget in some strongly connected component
 * (the component still holds a cycle; only its classification may be incomplete).
 */
public record CheckResult(int transactions, int ok, int failed, int unknown, long appendsAcknowledged,
                          long appendsUnchecked, Map<String, Long> counts, List<Anomaly> anomalies,
                          int nontrivialComponents, boolean searchTruncated, long elapsedMillis) {
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    public CheckResult {
        counts = Map.copyOf(counts);
        anomalies = List.copyOf(anomalies);
    }

    public long count(String type) { return counts.getOrDefault(type, 0L); }

    /** Acknowledged appends missing from the final read of their key. */
    public long lost() { return count("lost"); }

    /** All anomalies but lost appends. */
    public long anomalyCount() {
        return counts.entrySet().stream().filter(e -> !e.getKey().equals("lost")).mapToLong(Map.Entry::getValue).sum();
    }

    public boolean valid() { return lost() == 0 && anomalyCount() == 0; }

    public String toJson() {
        try {
            return JSON.writeValueAsString(this);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public void writeJson(Path file) {
        try {
            JSON.writeValue(file.toFile(), this);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A report.md section: the verdict, counts and each example anomaly with its cycle explained. */
    public String markdown() {
        StringBuilder b = new StringBuilder();
        b.append("## Consistency check (list-append)\n\n");
        b.append(valid() ? "**Valid**: no anomaly, no lost append.\n\n"
                : "**Invalid**: " + anomalyCount() + " anomalies, " + lost() + " lost appends.\n\n");
        b.append("| transactions | ok | failed | unknown | acknowledged appends | appends not checked (key never read after) | checked in |\n");
        b.append("|---:|---:|---:|---:|---:|---:|---:|\n");
        b.append("| ").append(transactions).append(" | ").append(ok).append(" | ").append(failed).append(" | ").append(unknown)
                .append(" | ").append(appendsAcknowledged).append(" | ").append(appendsUnchecked).append(" | ")
                .append(elapsedMillis).append(" ms |\n\n");
        if (!counts.isEmpty()) {
            b.append("| anomaly | count |\n|---|---:|\n");
            counts.entrySet().stream().sorted(Map.Entry.comparingByKey())
                    .forEach(e -> b.append("| ").append(e.getKey()).append(" | ").append(e.getValue()).append(" |\n"));
            b.append('\n');
        }
        if (searchTruncated) b.append("The cycle search hit its budget in some component; its classification may be incomplete.\n\n");
        int i = 0;
        for (Anomaly a : anomalies) {
            b.append("### ").append(++i).append(". ").append(a.type()).append("\n\n").append(a.description()).append("\n\n");
            for (String s : a.steps()) b.append("- ").append(s).append('\n');
            if (!a.transactions().isEmpty()) {
                b.append("\n```\n");
                for (String t : a.transactions()) b.append(t).append('\n');
                b.append("```\n");
            }
            b.append('\n');
        }
        return b.toString();
    }
}
