package org.wanrep.frontend;

import org.wanrep.tls.TlsContext;

/**
 * How client sessions are secured: {@code tls} offered on SSLRequest (null: answered N), demanded
 * with {@code requireTls}; with {@code clientRoles} a session's backend logs in as the client's own
 * role (password from the users setting) and its updates run as that role at every site.
 */
public record SessionSecurity(TlsContext tls, boolean requireTls, boolean clientRoles) {
    public static final SessionSecurity NONE = new SessionSecurity(null, false, false);
}
