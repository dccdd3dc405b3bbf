package org.wanrep.tls;

import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.ContentSigner;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

import java.io.IOException;
import java.io.StringWriter;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;

/**
 * Throw-away certificates (BouncyCastle): a CA, and server or client certificates it signs, with
 * ECDSA P-256 keys (fast to make, accepted by libpq, pgjdbc and JSSE). For local clusters and tests;
 * a deployment brings certificates of its own.
 */
public final class Certificates {
    private Certificates() {}

    private static final SecureRandom RANDOM = new SecureRandom();

    /** A certificate and its key pair. */
    public record Issued(X509Certificate certificate, KeyPair keys) {}

    /** A self-signed CA certificate valid from an hour ago for {@code validity}. */
    public static Issued ca(String commonName, Duration validity) throws GeneralSecurityException {
        KeyPair kp = keyPair();
        X500Name name = new X500Name("CN=" + commonName);
        try {
            X509v3CertificateBuilder b = builder(name, name, kp, validity);
            JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(0));
            b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
            b.addExtension(Extension.subjectKeyIdentifier, false, ext.createSubjectKeyIdentifier(kp.getPublic()));
            return new Issued(sign(b, kp), kp);
        } catch (IOException e) {
            throw new GeneralSecurityException(e);
        }
    }

    /**
     * A certificate signed by {@code ca}: for a server (names: DNS names or IP addresses, the
     * subject alternative names clients verify with sslmode=verify-full), or for a client (its
     * common name is the user name, as PostgreSQL's clientcert=verify-full reads it).
     */
    public static Issued issue(Issued ca, String commonName, List<String> names, boolean server, Duration validity)
            throws GeneralSecurityException {
        KeyPair kp = keyPair();
        try {
            X509v3CertificateBuilder b = builder(X500Name.getInstance(ca.certificate().getSubjectX500Principal().getEncoded()),
                    new X500Name("CN=" + commonName), kp, validity);
            JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
            b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature));
            b.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(server ? KeyPurposeId.id_kp_serverAuth : KeyPurposeId.id_kp_clientAuth));
            b.addExtension(Extension.subjectKeyIdentifier, false, ext.createSubjectKeyIdentifier(kp.getPublic()));
            b.addExtension(Extension.authorityKeyIdentifier, false, ext.createAuthorityKeyIdentifier(ca.certificate()));
            if (!names.isEmpty()) {
                List<GeneralName> alt = new ArrayList<>();
                for (String n : names) alt.add(new GeneralName(isIp(n) ? GeneralName.iPAddress : GeneralName.dNSName, n));
                b.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(alt.toArray(GeneralName[]::new)));
            }
            return new Issued(sign(b, ca.keys()), kp);
        } catch (IOException e) {
            throw new GeneralSecurityException(e);
        }
    }

    /** Writes the certificate in PEM, readable by all (certificates are public). */
    public static void writeCertificate(Path file, X509Certificate cert) throws IOException {
        Files.writeString(file, pem(cert));
    }

    /** Writes the private key in PEM (PKCS#8, unencrypted), readable by its owner only. */
    public static void writeKey(Path file, java.security.PrivateKey key) throws IOException {
        writeOwnerOnly(file, pem(new JcaPKCS8Generator(key, null)).getBytes(StandardCharsets.US_ASCII));
    }

    /**
     * Writes a file readable and writable by its owner only (0600): created with those permissions,
     * so its content is never readable by others, not even for a moment.
     */
    public static void writeOwnerOnly(Path file, byte[] content) throws IOException {
        Files.deleteIfExists(file);
        try {
            Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        } catch (UnsupportedOperationException e) {
            Files.createFile(file);   // not a POSIX file system: the platform's default
        }
        Files.write(file, content);
    }

    private static String pem(Object o) throws IOException {
        StringWriter w = new StringWriter();
        try (JcaPEMWriter p = new JcaPEMWriter(w)) {
            p.writeObject(o);
        }
        return w.toString();
    }

    private static KeyPair keyPair() throws GeneralSecurityException {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
        return g.generateKeyPair();
    }

    private static X509v3CertificateBuilder builder(X500Name issuer, X500Name subject, KeyPair kp, Duration validity) {
        Instant now = Instant.now();
        return new JcaX509v3CertificateBuilder(issuer, new BigInteger(64, RANDOM).add(BigInteger.ONE), Date.from(now.minus(Duration.ofHours(1))),
                Date.from(now.plus(validity)), subject, kp.getPublic());
    }

    private static X509Certificate sign(X509v3CertificateBuilder b, KeyPair signer) throws GeneralSecurityException {
        try {
            ContentSigner s = new JcaContentSignerBuilder("SHA256withECDSA").build(signer.getPrivate());
            return new JcaX509CertificateConverter().getCertificate(b.build(s));
        } catch (org.bouncycastle.operator.OperatorCreationException e) {
            throw new GeneralSecurityException(e);
        }
    }

    private static boolean isIp(String name) {
        return name.matches("[0-9.]+") || name.contains(":");
    }
}
