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

    /** {@code mock}: a stand-in for an unknown name, never admitted (see {@link #mock}). */
    public record User(String name, Method method, String secret, ScramVerifier verifier, boolean mock) {
        public User(String name, Method method, String secret, ScramVerifier verifier) { this(name, method, secret, verifier, false); }
    }

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

    /**
     * The password the proxy logs in to the replica with as this user: the one in the users setting
     * (the same role password at the replica), none for trust users or a SCRAM verifier (then the
     * replica must trust the proxy's connections, e.g. its local socket).
     */
    public static String replicaPassword(User u) {
        if (u == null || u.secret() == null || u.secret().startsWith("SCRAM-SHA-256$")) return "";
        return u.secret();
    }

    /** Keys the made-up salts of unknown users: the same name gets the same salt while this process runs. */
    private final byte[] mockKey = new java.security.SecureRandom().generateSeed(32);

    /**
     * A stand-in for a user name that is not configured: it goes through the same exchange as a real
     * user (SCRAM with a salt that is stable per name, or md5 if every password user uses md5) and
     * can never succeed, so that the answer and its timing do not tell unknown names from wrong
     * passwords (PostgreSQL's mock authentication).
     */
    public User mock(String name) {
        boolean md5Only = users.values().stream().anyMatch(u -> u.method() == Method.MD5)
                && users.values().stream().noneMatch(u -> u.method() == Method.SCRAM);
        byte[] salt;
        byte[] keys = new byte[64];
        try {
            javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA256");
            mac.init(new javax.crypto.spec.SecretKeySpec(mockKey, "HmacSHA256"));
            salt = java.util.Arrays.copyOf(mac.doFinal(name.getBytes(java.nio.charset.StandardCharsets.UTF_8)), 16);
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
        new java.security.SecureRandom().nextBytes(keys);
        String secret = java.util.HexFormat.of().formatHex(keys);   // no client can know it
        ScramVerifier v = new ScramVerifier(salt, 4096, java.util.Arrays.copyOf(keys, 32), java.util.Arrays.copyOfRange(keys, 32, 64));
        return new User(name, md5Only ? Method.MD5 : Method.SCRAM, secret, v, true);
    }
}
