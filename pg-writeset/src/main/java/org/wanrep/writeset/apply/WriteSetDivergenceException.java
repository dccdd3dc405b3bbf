package org.wanrep.writeset.apply;

import java.sql.SQLException;

/**
 * Applying a write set did not find the rows it names (or found several): this replica no longer
 * holds what the origin held, so it has diverged and must not go on silently. SQLSTATE XX001
 * (data_corrupted).
 */
public class WriteSetDivergenceException extends SQLException {
    public WriteSetDivergenceException(String message) {
        super(message, "XX001");
    }
}
