package org.wanrep.auth;

import com.ongres.scram.common.ScramFunctions;
import com.ongres.scram.common.ScramMechanism;
import com.ongres.scram.common.StringPreparation;

import java.security.SecureRandom;
import java.util.Base64;

/** What a server keeps of a SCRAM-SHA-256 password: salt, iterations, StoredKey and ServerKey. */
public record ScramVerifier(byte[] salt, int iterations, byte[] storedKey, byte[] serverKey) {
    static final ScramMechanism MECH = ScramMechanism.SCRAM_SHA_256;

    /** A verifier from a plain password (random salt) or from PostgreSQL's verifier format. */
    public static ScramVerifier fromSecret(String secret) {
        if (secret.startsWith("SCRAM-SHA-256$")) {
            try {
                String[] parts = secret.substring("SCRAM-SHA-256$".length()).split("\\$");
                String[] iterSalt = parts[0].split(":");
                String[] keys = parts[1].split(":");
                Base64.Decoder b64 = Base64.getDecoder();
                return new ScramVerifier(b64.decode(iterSalt[1]), Integer.parseInt(iterSalt[0]), b64.decode(keys[0]), b64.decode(keys[1]));
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("users: malformed SCRAM verifier (expected SCRAM-SHA-256$iterations:salt$storedkey:serverkey)");
            }
        }
        byte[] salt = ScramFunctions.salt(16, new SecureRandom());
        int iterations = 4096;
        byte[] salted = ScramFunctions.saltedPassword(MECH, StringPreparation.POSTGRESQL_PREPARATION, secret.toCharArray(), salt, iterations);
        return new ScramVerifier(salt, iterations, ScramFunctions.storedKey(MECH, ScramFunctions.clientKey(MECH, salted)),
                ScramFunctions.serverKey(MECH, salted));
    }
}
