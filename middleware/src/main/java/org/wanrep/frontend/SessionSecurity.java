package org.wanrep.frontend;

import org.wanrep.tls.TlsContext;

/**
 * How client sessions are secured: {@code tls} offered on SSLRequest (null: answered N), demanded
 * with {@code requireTls}; with {@code clientRoles} a session's backend logs in as the client's own
 * role (password from the users setting) and its updates run as that role at every site; with
 * {@code certificateNamesUser} a client certificate's CN must be the user name (clientcert=verify-full).
 */
public record SessionSecurity(TlsContext tls, boolean requireTls, boolean clientRoles, boolean certificateNamesUser) {
    public static final SessionSecurity NONE = new SessionSecurity(null, false, false, false);
}
