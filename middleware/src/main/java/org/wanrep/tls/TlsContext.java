package org.wanrep.tls;

import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;
import java.io.IOException;
import java.io.InputStream;
import java.io.Reader;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.List;

/**
 * TLS for the PostgreSQL protocol (JSSE, TLS 1.3 and 1.2 only), negotiated as PostgreSQL does: the
 * client sends an SSLRequest, the server answers 'S' and both continue inside TLS on the same socket.
 * The server side is the proxy's (its certificate and key from PEM files, optionally a CA whose
 * certificates clients must present); the client side is the proxy's connection to a remote replica
 * (libpq's sslmode require / verify-ca / verify-full).
 */
public final class TlsContext {
    static final String[] PROTOCOLS = {"TLSv1.3", "TLSv1.2"};
    /** A handshake that has not finished by then ends the connection (it holds a thread meanwhile). */
    private static final int HANDSHAKE_TIMEOUT_MS = 30_000;

    private final SSLContext ssl;
    private final boolean clientCertificates;
    private final boolean verifyHost;

    private TlsContext(SSLContext ssl, boolean clientCertificates, boolean verifyHost) {
        this.ssl = ssl;
        this.clientCertificates = clientCertificates;
        this.verifyHost = verifyHost;
    }

    /**
     * The server side: {@code cert} (PEM, the server's certificate first, then any intermediates) and
     * {@code key} (PEM, PKCS#8 or PKCS#1/SEC1, unencrypted); with {@code ca} (PEM, may be null) every
     * client must present a certificate that chains to one of its certificates.
     */
    public static TlsContext server(Path cert, Path key, Path ca) throws IOException, GeneralSecurityException {
        List<X509Certificate> chain = readCertificates(cert);
        if (chain.isEmpty()) throw new GeneralSecurityException("no certificate in " + cert);
        PrivateKey pk = readKey(key);
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        char[] pw = new char[0];
        ks.setKeyEntry("server", pk, pw, chain.toArray(Certificate[]::new));
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, pw);
        TrustManager[] tms = ca == null ? null : trustManagers(ca);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(kmf.getKeyManagers(), tms, null);
        return new TlsContext(ctx, ca != null, false);
    }

    /**
     * The client side, as libpq's {@code sslmode}: {@code require} encrypts without checking the
     * server's certificate; {@code verify-ca} checks it chains to {@code rootCert}; {@code verify-full}
     * also that it names the host connected to. Null for {@code disable}.
     */
    public static TlsContext client(String sslmode, Path rootCert) throws IOException, GeneralSecurityException {
        TrustManager[] tms;
        switch (sslmode) {
            case "disable" -> { return null; }
            case "require" -> tms = new TrustManager[]{new TrustAll()};
            case "verify-ca", "verify-full" -> {
                if (rootCert == null) throw new GeneralSecurityException("sslmode " + sslmode + " needs a root certificate (postgres.sslrootcert)");
                tms = trustManagers(rootCert);
            }
            default -> throw new GeneralSecurityException("unknown sslmode " + sslmode);
        }
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, tms, null);
        return new TlsContext(ctx, false, sslmode.equals("verify-full"));
    }

    /** Whether TLS clients must present a certificate signed by the configured CA. */
    public boolean requiresClientCertificates() { return clientCertificates; }

    /** The server's end: TLS over an accepted connection, handshake completed. */
    public SSLSocket accept(Socket plain) throws IOException {
        SSLSocket s = (SSLSocket) ssl.getSocketFactory().createSocket(plain, plain.getInetAddress().getHostAddress(), plain.getPort(), true);
        s.setUseClientMode(false);
        s.setEnabledProtocols(PROTOCOLS);
        if (clientCertificates) s.setNeedClientAuth(true);
        return handshake(plain, s);
    }

    /** The client's end: TLS over a connection to {@code host}, handshake completed and the server checked. */
    public SSLSocket connect(Socket plain, String host) throws IOException {
        SSLSocket s = (SSLSocket) ssl.getSocketFactory().createSocket(plain, host, plain.getPort(), true);
        s.setUseClientMode(true);
        SSLParameters p = s.getSSLParameters();
        p.setProtocols(PROTOCOLS);
        if (verifyHost) {
            p.setEndpointIdentificationAlgorithm("HTTPS");   // DNS or IP subject alternative names, as verify-full
            if (!host.matches("[0-9.]+") && !host.contains(":")) p.setServerNames(List.of(new SNIHostName(host)));
        }
        s.setSSLParameters(p);
        return handshake(plain, s);
    }

    private static SSLSocket handshake(Socket plain, SSLSocket s) throws IOException {
        int before = plain.getSoTimeout();
        s.setSoTimeout(HANDSHAKE_TIMEOUT_MS);
        try {
            s.startHandshake();
        } catch (IOException e) {
            s.close();
            throw e;
        }
        s.setSoTimeout(before);
        return s;
    }

    /** The common name (CN) of the peer's certificate in {@code session}, or null if it presented none. */
    public static String peerCommonName(javax.net.ssl.SSLSession session) {
        try {
            Certificate[] chain = session.getPeerCertificates();
            if (chain.length == 0 || !(chain[0] instanceof X509Certificate x)) return null;
            for (javax.naming.ldap.Rdn rdn : new javax.naming.ldap.LdapName(x.getSubjectX500Principal().getName()).getRdns())
                if (rdn.getType().equalsIgnoreCase("CN")) return rdn.getValue().toString();
            return null;
        } catch (javax.net.ssl.SSLPeerUnverifiedException | javax.naming.InvalidNameException e) {
            return null;
        }
    }

    /** Every certificate in a PEM (or DER) file. */
    public static List<X509Certificate> readCertificates(Path file) throws IOException, GeneralSecurityException {
        try (InputStream in = Files.newInputStream(file)) {
            return CertificateFactory.getInstance("X.509").generateCertificates(in).stream().map(c -> (X509Certificate) c).toList();
        }
    }

    /** An unencrypted private key in PEM: PKCS#8 ("PRIVATE KEY") or PKCS#1/SEC1 ("RSA/EC PRIVATE KEY"). */
    public static PrivateKey readKey(Path file) throws IOException, GeneralSecurityException {
        try (Reader r = Files.newBufferedReader(file); PEMParser p = new PEMParser(r)) {
            Object o;
            while ((o = p.readObject()) != null) {
                JcaPEMKeyConverter conv = new JcaPEMKeyConverter();
                if (o instanceof PEMKeyPair kp) return conv.getKeyPair(kp).getPrivate();
                if (o instanceof PrivateKeyInfo info) return conv.getPrivateKey(info);
                if (o instanceof org.bouncycastle.pkcs.PKCS8EncryptedPrivateKeyInfo || o instanceof org.bouncycastle.openssl.PEMEncryptedKeyPair)
                    throw new GeneralSecurityException(file + " holds an encrypted key: give an unencrypted one (readable by its owner only)");
                // anything else (EC parameters before an EC key): skip
            }
        }
        throw new GeneralSecurityException("no private key in " + file);
    }

    private static TrustManager[] trustManagers(Path ca) throws IOException, GeneralSecurityException {
        List<X509Certificate> cas = readCertificates(ca);
        if (cas.isEmpty()) throw new GeneralSecurityException("no certificate in " + ca);
        KeyStore ts = KeyStore.getInstance("PKCS12");
        ts.load(null, null);
        for (int i = 0; i < cas.size(); i++) ts.setCertificateEntry("ca" + i, cas.get(i));
        TrustManagerFactory tmf = TrustManagerFactory.getInstance("PKIX");
        tmf.init(ts);
        return tmf.getTrustManagers();
    }

    /** libpq's sslmode=require without a root certificate: encryption, no authentication of the server. */
    private static final class TrustAll implements X509TrustManager {
        @Override public void checkClientTrusted(X509Certificate[] chain, String authType) { }
        @Override public void checkServerTrusted(X509Certificate[] chain, String authType) { }
        @Override public X509Certificate[] getAcceptedIssuers() { return new X509Certificate[0]; }
    }
}
