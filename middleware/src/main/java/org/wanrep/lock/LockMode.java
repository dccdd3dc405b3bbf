package org.wanrep.lock;

/** Table lock modes: readers share, a writer excludes everyone. */
public enum LockMode {
    READ, WRITE;

    boolean compatibleWith(LockMode other) { return this == READ && other == READ; }
}
