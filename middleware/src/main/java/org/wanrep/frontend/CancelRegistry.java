package org.wanrep.frontend;

import java.security.SecureRandom;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The BackendKeyData the proxy issues to its clients, mapped to their sessions, so that a
 * CancelRequest (which arrives on a new connection) reaches the right backend.
 */
public final class CancelRegistry {
    public record Key(int pid, int secret) {}

    private final SecureRandom random = new SecureRandom();
    private final ConcurrentHashMap<Key, ClientSession> sessions = new ConcurrentHashMap<>();

    Key register(ClientSession s) {
        while (true) {
            Key k = new Key(random.nextInt(1, Integer.MAX_VALUE), random.nextInt());
            if (sessions.putIfAbsent(k, s) == null) return k;
        }
    }

    void unregister(Key k) { if (k != null) sessions.remove(k); }

    void cancel(int pid, int secret) {
        ClientSession s = sessions.get(new Key(pid, secret));
        if (s != null) s.cancelRequested();
    }
}
