package org.wanrep.checker;

import java.util.Arrays;

/**
 * One micro-operation of a list-append transaction: {@code [append k v]} appends the unique value v to key k's list,
 * {@code [r k list]} reads key k's whole list ({@code read} is null while the result is not known: at invocation, or
 * when the transaction failed or its outcome is unknown).
 */
public record MicroOp(Kind kind, long key, long value, long[] read) {
    public enum Kind { APPEND, READ }

    public static MicroOp append(long key, long value) { return new MicroOp(Kind.APPEND, key, value, null); }

    public static MicroOp read(long key) { return new MicroOp(Kind.READ, key, 0, null); }

    public static MicroOp read(long key, long... list) { return new MicroOp(Kind.READ, key, 0, list); }

    public boolean isAppend() { return kind == Kind.APPEND; }

    public boolean isRead() { return kind == Kind.READ; }

    /** This read with its observed list. */
    public MicroOp withRead(long[] list) { return new MicroOp(Kind.READ, key, 0, list); }

    @Override public String toString() {
        return isAppend() ? "[append " + key + " " + value + "]" : "[r " + key + " " + (read == null ? "nil" : Arrays.toString(read)) + "]";
    }

    @Override public boolean equals(Object o) {
        return o instanceof MicroOp m && m.kind == kind && m.key == key && m.value == value && Arrays.equals(m.read, read);
    }

    @Override public int hashCode() { return Long.hashCode(key) * 31 + Long.hashCode(value) + Arrays.hashCode(read); }
}
