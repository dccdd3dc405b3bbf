package org.wanrep.auth;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The client users the proxy admits, from the {@code users} setting:
 * {@code name:method[:secret]} separated by commas, method {@code trust}, {@code md5} (secret =
 * password) or {@code scram-sha-256} (secret = password, or a PostgreSQL verifier
 * {@code SCRAM-SHA-256$iterations:salt$storedkey:serverkey} as in pg_authid).
 */
public final class UserDirectory {
    public enum Method { TRUST, MD5, SCRAM }

    public record User(String name, Method method, String secret, ScramVerifier verifier) {}

    private final Map<String, User> users = new LinkedHashMap<>();

    public static UserDirectory parse(String spec) {
        UserDirectory d = new UserDirectory();
        if (spec == null || spec.isBlank()) return d;
        for (String entry : spec.split(",")) {
            String e = entry.trim();
            if (e.isEmpty()) continue;
            String[] p = e.split(":", 3);
            if (p.length < 2) throw new IllegalArgumentException("users: '" + e + "' is not name:method[:secret]");
            Method m = switch (p[1].toLowerCase()) {
                case "trust" -> Method.TRUST;
                case "md5", "password" -> Method.MD5;
                case "scram-sha-256", "scram" -> Method.SCRAM;
                default -> throw new IllegalArgumentException("users: unknown method '" + p[1] + "' for " + p[0] + " (trust, md5, scram-sha-256)");
            };
            String secret = p.length > 2 ? p[2] : null;
            if (m != Method.TRUST && (secret == null || secret.isEmpty()))
                throw new IllegalArgumentException("users: " + p[0] + " uses " + p[1] + " but has no password");
            ScramVerifier v = m == Method.SCRAM ? ScramVerifier.fromSecret(secret) : null;
            d.users.put(p[0], new User(p[0], m, secret, v));
        }
        return d;
    }

    public User find(String name) { return users.get(name); }
}
