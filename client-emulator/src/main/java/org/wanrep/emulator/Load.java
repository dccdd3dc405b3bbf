package org.wanrep.emulator;

import java.time.Duration;

/** How an emulator offers its transactions: on a schedule (open loop) or from waiting clients (closed loop). */
public sealed interface Load {
    /**
     * Open loop: transactions are due on a wall-clock schedule at {@code rateTps} whether or not
     * earlier ones finished. {@code offset} shifts this emulator's schedule so that several
     * emulators together submit evenly spaced transactions rather than bursts.
     */
    record Open(double rateTps, Arrivals arrivals, Duration offset) implements Load {
        public Open {
            if (!(rateTps > 0)) throw new IllegalArgumentException("rate must be > 0 transactions per second, not " + rateTps);
        }

        public Open(double rateTps, Arrivals arrivals) { this(rateTps, arrivals, Duration.ZERO); }

        @Override public Load share(int i, int n) {
            double each = rateTps / n;
            return new Open(each, arrivals, offset.plusNanos(Math.round(i * 1e9 / rateTps)));
        }

        @Override public String describe() {
            return String.format(java.util.Locale.ROOT, "open loop, %s arrivals at %.1f transactions/s", arrivals.label(), rateTps);
        }
    }

    /**
     * Closed loop: {@code clients} clients, each thinking, submitting one transaction and waiting for
     * its answer. {@code thinkTime} null means the workload's own think time.
     */
    record Closed(int clients, Duration thinkTime) implements Load {
        public Closed {
            if (clients < 1) throw new IllegalArgumentException("clients must be >= 1, not " + clients);
        }

        @Override public Load share(int i, int n) {
            if (clients < n) throw new IllegalArgumentException(clients + " clients cannot be split over " + n + " emulators");
            return new Closed(clients / n + (i < clients % n ? 1 : 0), thinkTime);
        }

        @Override public String describe() {
            return "closed loop, " + clients + " clients, think time " + (thinkTime == null ? "from the workload" : thinkTime.toMillis() + " ms");
        }
    }

    /** Emulator {@code i}'s share when {@code n} emulators together offer this load. */
    Load share(int i, int n);

    String describe();
}
