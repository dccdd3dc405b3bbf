package org.wanrep.emulator.workload;

import java.sql.Connection;
import java.sql.SQLException;

/** One transaction of a workload, ready to run on a client connection. */
public interface Transaction {
    /** Its type, one of {@link Workload#types()}; response times are kept per type. */
    String type();

    /** Read-only transactions run on a local snapshot; the rest are replicated updates. */
    boolean readOnly();

    /**
     * Runs it to its end (committed, or failed with the exception) on {@code c}, which is in
     * autocommit mode on entry and must be left so. One request where the workload allows it.
     */
    void execute(Connection c) throws SQLException;
}
