package org.wanrep.writeset.capture;

/**
 * wal2json 2.5 writes NaN, Infinity and -Infinity of numeric, real and double precision columns as
 * JSON {@code null}, the same as SQL NULL (2.6's numeric-data-types-as-string is not in Debian 12).
 * A null in a NOT NULL or primary-key column can only be one of those, and is always refused. A null
 * in a nullable column is ambiguous; this policy decides.
 */
public enum NumericNullPolicy {
    /** Take it as SQL NULL (right unless the application stores NaN/Infinity in nullable columns). */
    NULL_IS_NULL,
    /** Refuse the write set: exact, but refuses every transaction writing a NULL numeric/float. */
    REFUSE
}
