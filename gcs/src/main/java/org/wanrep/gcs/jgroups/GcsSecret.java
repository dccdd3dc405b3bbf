package org.wanrep.gcs.jgroups;

import org.jgroups.JChannel;
import org.jgroups.protocols.SERIALIZE;
import org.jgroups.protocols.SYM_ENCRYPT;
import org.jgroups.stack.ProtocolStack;

import javax.crypto.SecretKey;
import javax.crypto.spec.SecretKeySpec;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Set;

/**
 * The secret the sites of one cluster share: a 256-bit key, base64 on one line of a file only its owner
 * may read. With it, every message between sites is serialized whole (headers included) and sealed with
 * ChaCha20-Poly1305 right above the transport, so discovery, failure detection, membership and the
 * total-order traffic are all encrypted and authenticated; a process without the key can neither join,
 * nor read, nor inject anything that the members accept (see docs/architecture.md, "Between sites").
 */
public final class GcsSecret {
    private GcsSecret() {}

    static final String ALGORITHM = "ChaCha20-Poly1305";   // an AEAD that takes the IvParameterSpec JGroups' Encrypt passes
    static final int KEY_BYTES = 32, NONCE_BYTES = 12;

    /** Writes a new random key to {@code file} (created with mode 0600; an existing file is kept as it is). */
    public static Path generate(Path file) throws IOException {
        byte[] k = new byte[KEY_BYTES];
        new SecureRandom().nextBytes(k);
        String text = Base64.getEncoder().encodeToString(k) + "\n";
        Path dir = file.toAbsolutePath().getParent();
        if (dir != null) Files.createDirectories(dir);
        try {
            if (Files.getFileStore(dir).supportsFileAttributeView(PosixFileAttributeView.class))
                Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            else
                Files.createFile(file);
        } catch (FileAlreadyExistsException e) {
            load(file);   // keep it if it is a usable secret: every site must share the same one
            return file;
        }
        Files.writeString(file, text, StandardCharsets.US_ASCII);
        return file;
    }

    /** Reads the key; refuses a file that others may read, or one that does not hold a 256-bit key. */
    public static SecretKey load(Path file) throws IOException {
        if (Files.getFileStore(file).supportsFileAttributeView(PosixFileAttributeView.class)) {
            Set<PosixFilePermission> p = Files.getPosixFilePermissions(file);
            for (PosixFilePermission bad : Set.of(PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_WRITE,
                    PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_WRITE))
                if (p.contains(bad))
                    throw new IOException("gcs.secret_file " + file + " is accessible to others (" + PosixFilePermissions.toString(p)
                            + "): it must be readable by its owner only (chmod 600)");
        }
        byte[] k;
        try {
            k = Base64.getDecoder().decode(Files.readString(file, StandardCharsets.US_ASCII).trim());
        } catch (IllegalArgumentException e) {
            throw new IOException("gcs.secret_file " + file + " does not hold a base64 key: " + e.getMessage());
        }
        if (k.length != KEY_BYTES) throw new IOException("gcs.secret_file " + file + " holds " + k.length + " bytes, not a " + KEY_BYTES * 8 + "-bit key");
        return new SecretKeySpec(k, "ChaCha20");
    }

    /**
     * Puts SYM_ENCRYPT and, above it, SERIALIZE right above the WAN emulation (just above the transport) of a
     * channel not connected yet. SERIALIZE turns each message, headers included, into the payload that
     * SYM_ENCRYPT seals: without it JGroups encrypts payloads only and passes a message without payload
     * (e.g. a JOIN request) with no check at all.
     */
    static void install(JChannel ch, SecretKey key) throws Exception {
        ProtocolStack stack = ch.getProtocolStack();
        SYM_ENCRYPT enc = new SYM_ENCRYPT().setSecretKey(key);
        enc.symAlgorithm(ALGORITHM);
        enc.symIvLength(NONCE_BYTES);
        enc.symKeylength(KEY_BYTES * 8);
        SERIALIZE ser = new SERIALIZE();
        stack.insertProtocol(enc, ProtocolStack.Position.ABOVE, WAN_DELAY.class);
        stack.insertProtocol(ser, ProtocolStack.Position.ABOVE, SYM_ENCRYPT.class);
        // the stack was initialised when the channel was built; these two join it later
        enc.init();
        ser.init();
    }
}
