package org.wanrep.checker;

/** Jepsen's event types: an invocation, then ok (committed), fail (definitely not committed) or info (outcome unknown). */
public enum OpType {
    INVOKE, OK, FAIL, INFO;

    public String json() { return name().toLowerCase(java.util.Locale.ROOT); }

    public static OpType parse(String s) { return valueOf(s.toUpperCase(java.util.Locale.ROOT)); }
}
