package org.wanrep.emulator;

/** How the emulator treats an error, by its SQLSTATE. */
final class SqlStates {
    private SqlStates() {}

    /** Serialization failure and deadlock: the transaction may succeed when run again. */
    static boolean retryable(String state) { return "40001".equals(state) || "40P01".equals(state); }

    /** Connection exceptions (class 08): the connection is gone and must be replaced. */
    static boolean connectionLost(String state) { return state != null && state.startsWith("08"); }
}
