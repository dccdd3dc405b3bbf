package org.wanrep.sql;

import org.wanrep.lock.TableSet;
import org.wanrep.wire.PgError;

/**
 * The session's view of one client request: its route, the tables it locks, whether it calls
 * random() (then every site seeds it alike) or time functions (rewritten to the origin's time),
 * and for {@link Route#REFUSED} the error the client gets.
 */
public record UnitAnalysis(Route route, TableSet tables, boolean random, boolean timeFunctions, boolean catalogChange, PgError error) {
    public static UnitAnalysis local() { return new UnitAnalysis(Route.LOCAL, TableSet.of(java.util.Set.of(), java.util.Set.of()), false, false, false, null); }

    public static UnitAnalysis refused(PgError e) { return new UnitAnalysis(Route.REFUSED, TableSet.allTables(), false, false, false, e); }
}
