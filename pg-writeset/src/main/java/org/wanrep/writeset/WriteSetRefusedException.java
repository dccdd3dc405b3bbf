package org.wanrep.writeset;

import java.sql.SQLException;

/**
 * A transaction whose write set cannot be captured or shipped faithfully. Carries a PostgreSQL
 * SQLSTATE so the middleware can hand it to the client as an ErrorResponse unchanged.
 */
public class WriteSetRefusedException extends SQLException {
    /** object_not_in_prerequisite_state: a table without primary key or replica identity. */
    public static final String NO_IDENTITY = "55000";
    /** feature_not_supported: TRUNCATE, NaN/Infinity numerics that wal2json 2.5 writes as null. */
    public static final String NOT_SUPPORTED = "0A000";
    /** program_limit_exceeded: a transaction bigger than the capture's limit. */
    public static final String TOO_BIG = "54000";

    public WriteSetRefusedException(String message, String sqlState) {
        super(message, sqlState);
    }
}
