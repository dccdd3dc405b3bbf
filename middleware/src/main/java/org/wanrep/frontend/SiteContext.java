package org.wanrep.frontend;

import org.wanrep.auth.UserDirectory;
import org.wanrep.backend.BackendTarget;
import org.wanrep.txn.ReplicationEngine;

import java.time.Duration;

/**
 * What every client session of one site shares. {@code writeSets} is this site's write-set I/O, null
 * under symmetric execution; {@code sessions} bounds the client sessions served at once; {@code limits} what clients may cost the site;
 * {@code preparedWriteSets} captures certified blocks' write sets at PREPARE (null unless blocks certify).
 */
public record SiteContext(String site, BackendTarget backend, UserDirectory users, ReplicationEngine engine,
                          org.wanrep.sql.Classifiers classifiers, CancelRegistry cancels, boolean lockedQueries, Duration lockTimeout,
                          org.wanrep.exec.WriteSetChannel writeSets, SessionLimit sessions, boolean faultInjection,
                          ClientLimits limits, org.wanrep.exec.WriteSetChannel preparedWriteSets) {}
