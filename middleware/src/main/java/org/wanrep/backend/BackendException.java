package org.wanrep.backend;

import org.wanrep.wire.PgError;

/** PostgreSQL refused (an ErrorResponse), or the connection to it failed. */
public final class BackendException extends java.io.IOException {
    private final PgError error;

    public BackendException(PgError error) {
        super(error.toString());
        this.error = error;
    }

    public BackendException(String message, Throwable cause) {
        super(message, cause);
        this.error = PgError.fatal("08006", message);
    }

    public PgError error() { return error; }
}
