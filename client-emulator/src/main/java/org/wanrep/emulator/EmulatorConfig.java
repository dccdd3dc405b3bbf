package org.wanrep.emulator;

import org.wanrep.emulator.workload.Workload;

import java.time.Duration;
import java.util.Objects;
import java.util.Properties;

/**
 * One emulator's settings, checked once when built and fixed afterwards. The defaults are the
 * study's: 800 transactions per client, the first and last 10% left out of the statistics.
 */
public record EmulatorConfig(Workload workload, Load load, int transactions, double warmupFraction, int connections,
                             long seed, int maxRetries, String user, String password, Duration drainTimeout) {
    public static final int DEFAULT_TRANSACTIONS = 800;
    public static final double DEFAULT_WARMUP_FRACTION = 0.1;
    public static final int DEFAULT_CONNECTIONS = 32;
    public static final int DEFAULT_MAX_RETRIES = 10;
    public static final Duration DEFAULT_DRAIN_TIMEOUT = Duration.ofMinutes(5);
    /** A transaction that starts more than this after it was due counts as a late start. */
    public static final Duration LATE_START = Duration.ofMillis(1);

    public EmulatorConfig {
        Objects.requireNonNull(workload, "workload");
        Objects.requireNonNull(load, "load");
        Objects.requireNonNull(drainTimeout, "drainTimeout");
        if (transactions < 1) throw new IllegalArgumentException("transactions must be >= 1, not " + transactions);
        if (!(warmupFraction >= 0 && warmupFraction < 0.5))
            throw new IllegalArgumentException("warm-up fraction must be in [0, 0.5) (the same share is discarded at the end), not " + warmupFraction);
        if (connections < 1) throw new IllegalArgumentException("connections must be >= 1, not " + connections);
        if (maxRetries < 0) throw new IllegalArgumentException("max retries must be >= 0, not " + maxRetries);
        if (transactions - 2 * discarded(transactions, warmupFraction) < 1)
            throw new IllegalArgumentException(transactions + " transactions leave none to measure with warm-up fraction " + warmupFraction);
    }

    /** Transactions left out at each end: the first and the last {@code warmupFraction} of them. */
    public int warmup() { return discarded(transactions, warmupFraction); }

    public int cooldown() { return warmup(); }

    private static int discarded(int n, double f) { return (int) Math.floor(n * f + 1e-9); }

    /** The client connection's properties: user, password, the workload's own. */
    public Properties connectionProperties() {
        Properties p = new Properties();
        p.putAll(workload.connectionProperties());
        p.setProperty("user", user);
        if (password != null && !password.isEmpty()) p.setProperty("password", password);
        p.setProperty("ApplicationName", "wanrep-emulator");
        return p;
    }

    /**
     * Emulator {@code i}'s share of a run of {@code n} emulators: its part of the load, its own seed;
     * transactions, connections and the rest are per emulator already.
     */
    public EmulatorConfig shareOf(int i, int n) {
        return new EmulatorConfig(workload, load.share(i, n), transactions, warmupFraction, connections, seed + i, maxRetries, user, password, drainTimeout);
    }

    public static Builder builder(Workload w, Load load) { return new Builder(w, load); }

    public static final class Builder {
        private final Workload workload;
        private final Load load;
        private int transactions = DEFAULT_TRANSACTIONS, connections = DEFAULT_CONNECTIONS, maxRetries = DEFAULT_MAX_RETRIES;
        private double warmupFraction = DEFAULT_WARMUP_FRACTION;
        private long seed = 1;
        private String user = "postgres", password = "";
        private Duration drainTimeout = DEFAULT_DRAIN_TIMEOUT;

        private Builder(Workload w, Load load) {
            this.workload = w;
            this.load = load;
        }

        public Builder transactions(int n) { transactions = n; return this; }
        public Builder warmupFraction(double f) { warmupFraction = f; return this; }
        public Builder connections(int n) { connections = n; return this; }
        public Builder seed(long s) { seed = s; return this; }
        public Builder maxRetries(int n) { maxRetries = n; return this; }
        public Builder user(String u) { user = u; return this; }
        public Builder password(String p) { password = p; return this; }
        public Builder drainTimeout(Duration d) { drainTimeout = d; return this; }

        public EmulatorConfig build() {
            return new EmulatorConfig(workload, load, transactions, warmupFraction, connections, seed, maxRetries, user, password, drainTimeout);
        }
    }
}
