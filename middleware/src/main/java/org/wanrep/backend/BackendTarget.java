package org.wanrep.backend;

/** Where and as whom the proxy reaches its replica. */
public record BackendTarget(String host, int port, String user, String password) {
    @Override public String toString() { return user + "@" + host + ":" + port; }
}
