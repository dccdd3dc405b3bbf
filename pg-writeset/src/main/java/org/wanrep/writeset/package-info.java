/**
 * Write sets: what one committed update transaction wrote, captured at the executing replica and
 * applied at the others.
 * <ul>
 *   <li>Model: {@link org.wanrep.writeset.WriteSet} of {@link org.wanrep.writeset.RowChange}s whose
 *       values are PostgreSQL text plus type name ({@link org.wanrep.writeset.ColumnValue}); a
 *       TOAST-unchanged column is absent, never NULL.</li>
 *   <li>{@code codec}: compact binary form for the group channel.</li>
 *   <li>{@code capture}: wal2json format-version 2 through pgjdbc's replication protocol; pure parser
 *       and assembler, plus the I/O class {@code WriteSetCapture}.</li>
 *   <li>{@code apply}: {@code WriteSetApplier}, one local transaction per write set.</li>
 * </ul>
 * Decisions and limits (wal2json 2.5, PostgreSQL 15):
 * <ul>
 *   <li>TRUNCATE is refused (0A000): replaying it would erase rows the target may have that the
 *       origin's write set does not list, and it cannot be keyed.</li>
 *   <li>NaN/Infinity of numeric/real/double precision arrive as JSON null. In NOT NULL or key columns
 *       they are refused (0A000); in nullable columns {@code NumericNullPolicy} decides (default: take
 *       as NULL, which diverges if the application stores NaN/Infinity in nullable columns).</li>
 *   <li>Tables without primary key or replica identity: wal2json drops their UPDATE/DELETE silently, so
 *       the middleware must call {@link org.wanrep.writeset.KeyCheck#requireIdentity} before executing;
 *       the capture also refuses (55000) any transaction whose INSERT shows such a table.</li>
 *   <li>Delivery is at-least-once from the slot's confirmed position; a capture drops tags it has
 *       already handed over (within its lifetime).</li>
 * </ul>
 */
package org.wanrep.writeset;
