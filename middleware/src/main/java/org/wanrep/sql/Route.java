package org.wanrep.sql;

/** What the proxy does with one client request (a simple Query, or extended messages up to Sync). */
public enum Route {
    /** Runs at this site only: read-only statements, session commands, maintenance. */
    LOCAL,
    /** Changes the database: ordered and run at every site (in a block: needs the exclusive lock). */
    UPDATE,
    /** BEGIN / START TRANSACTION. */
    BEGIN,
    /** COMMIT / END / COMMIT AND CHAIN is refused. */
    COMMIT,
    /** ROLLBACK / ABORT. */
    ROLLBACK,
    /** Refused with an error (see the analysis' error). */
    REFUSED
}
