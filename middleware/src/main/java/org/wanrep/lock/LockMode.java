package org.wanrep.lock;

/**
 * Lock modes. On a table: {@link #READ} and {@link #WRITE} lock the whole table; the intention modes
 * are taken by statements that lock single rows (table, key) in {@link #READ}/{@link #WRITE}, so a
 * whole-table lock conflicts with every row lock of its table (multiple-granularity locking):
 * intention modes share with each other, a whole-table reader shares with row readers only, a
 * whole-table writer with nobody.
 */
public enum LockMode {
    INTENT_READ, INTENT_WRITE, READ, WRITE;

    boolean compatibleWith(LockMode other) {
        return switch (this) {
            case INTENT_READ -> other != WRITE;
            case INTENT_WRITE -> other == INTENT_READ || other == INTENT_WRITE;
            case READ -> other == READ || other == INTENT_READ;
            case WRITE -> false;
        };
    }

    /** The weakest mode that is at least as strong as both. */
    LockMode join(LockMode other) {
        if (this == other) return this;
        if (this == WRITE || other == WRITE) return WRITE;
        if ((this == READ && other == INTENT_WRITE) || (this == INTENT_WRITE && other == READ)) return WRITE;   // SIX: stronger is safe
        return ordinal() > other.ordinal() ? this : other;
    }
}
