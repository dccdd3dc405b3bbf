package org.wanrep.auth;

import com.ongres.scram.common.ScramFunctions;
import com.ongres.scram.common.ServerFirstMessage;
import com.ongres.scram.common.exception.ScramParseException;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;

/**
 * The server side of one SCRAM-SHA-256 exchange (RFC 5802/7677, as PostgreSQL does it: no channel
 * binding, the user name comes from the startup packet). Pure: messages in, messages out.
 */
public final class ScramServerExchange {
    private static final SecureRandom RANDOM = new SecureRandom();

    private final ScramVerifier verifier;
    private String clientFirstBare;
    private ServerFirstMessage serverFirst;

    public ScramServerExchange(ScramVerifier verifier) { this.verifier = verifier; }

    /** Answers the client-first message with the server-first message. */
    public String serverFirst(String clientFirstMessage) throws ScramParseException {
        // parsed by hand: libpq sends an empty user name ("n=,"), which the SCRAM library refuses
        if (clientFirstMessage.startsWith("p="))
            throw new ScramParseException("channel binding is not supported without SSL");
        int second = clientFirstMessage.indexOf(',', clientFirstMessage.indexOf(',') + 1);
        if (second < 0) throw new ScramParseException("no GS2 header in client-first message");
        // the proof covers the bare message exactly as the client sent it (after the GS2 header)
        clientFirstBare = clientFirstMessage.substring(second + 1);
        String clientNonce = null;
        for (String attr : clientFirstBare.split(",")) if (attr.startsWith("r=")) clientNonce = attr.substring(2);
        if (clientNonce == null || clientNonce.isEmpty()) throw new ScramParseException("no client nonce");
        serverFirst = new ServerFirstMessage(clientNonce, ScramFunctions.nonce(24, RANDOM),
                Base64.getEncoder().encodeToString(verifier.salt()), verifier.iterations());
        return serverFirst.toString();
    }

    /** Checks the client-final message's proof; returns the server-final message, or null if the proof is wrong. */
    public String serverFinal(String clientFinalMessage) {
        Map<String, String> attrs = new HashMap<>();
        for (String part : clientFinalMessage.split(",")) {
            int eq = part.indexOf('=');
            if (eq > 0) attrs.put(part.substring(0, eq), part.substring(eq + 1));
        }
        String proof = attrs.get("p");
        if (proof == null || !serverFirst.getNonce().equals(attrs.get("r"))) return null;
        String withoutProof = clientFinalMessage.substring(0, clientFinalMessage.lastIndexOf(",p="));
        String authMessage = clientFirstBare + "," + serverFirst + "," + withoutProof;
        if (!ScramFunctions.verifyClientProof(ScramVerifier.MECH, Base64.getDecoder().decode(proof), verifier.storedKey(), authMessage))
            return null;
        byte[] sig = ScramFunctions.serverSignature(ScramVerifier.MECH, verifier.serverKey(), authMessage);
        return "v=" + Base64.getEncoder().encodeToString(sig);
    }

    static byte[] utf8(String s) { return s.getBytes(StandardCharsets.UTF_8); }
}
