package org.wanrep.frontend;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.wanrep.backend.BackendConnection;
import org.wanrep.exec.WireTxnExecutor;
import org.wanrep.lock.TableSet;
import org.wanrep.sql.TimeRewriting;
import org.wanrep.txn.InteractiveBlock;
import org.wanrep.wire.PgError;
import org.wanrep.wire.WireMessage;

import java.io.IOException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * What an interactive block ({@link InteractiveBlock}, which owns its protocol: log, exclusive lock, certification,
 * commit, release) needs of the client session it runs in: the client's backend, the client, the session's named
 * statements, this site's write-set capture. The block does no socket I/O itself and does not see this package.
 */
final class BlockSession implements InteractiveBlock.Session {
    private static final Logger LOG = LoggerFactory.getLogger(BlockSession.class);

    private final ClientSession session;
    private final SiteContext ctx;
    private final InteractiveBlock.WriteSets writeSets;   // null under symmetric execution

    BlockSession(ClientSession session, SiteContext ctx) {
        this.session = session;
        this.ctx = ctx;
        this.writeSets = ctx.writeSets() == null ? null : new WriteSets();
    }

    private BackendConnection backend() { return session.backend(); }

    private String database() { return session.database(); }

    @Override public char status() { return backend().status(); }

    @Override public void deferBegin() { backend().deferBegin(); }

    @Override public PgError run(String sql) throws IOException { return backend().run(sql); }

    @Override public PgError runCollecting(String sql, Consumer<List<String>> rows) throws IOException {
        return backend().runCollecting(sql, rows);
    }

    @Override public List<InteractiveBlock.Ran> runEach(List<String> queries) throws IOException {
        return backend().runEach(queries).stream().map(r -> new InteractiveBlock.Ran(r.tags(), r.error())).toList();
    }

    @Override public InteractiveBlock.Relayed relay(List<WireMessage> unit, List<WireMessage> buffer) throws IOException {
        return session.relay(unit, buffer, null, null);
    }

    @Override public InteractiveBlock.Relayed relayAfter(List<String> statements, Consumer<List<String>> rows, List<WireMessage> unit) throws IOException {
        return session.relay(unit, null, statements, rows);
    }

    @Override public void toClient(List<WireMessage> messages) throws IOException { session.toClient(messages); }

    @Override public void replyError(List<WireMessage> unit, PgError e) throws IOException { session.replyError(unit, e); }

    @Override public void answerUnrelayed(List<WireMessage> unit, PgError e) throws IOException { session.answerUnrelayed(unit, e); }

    @Override public List<WireMessage> selfContained(List<WireMessage> messages, Set<String> defined) {
        return session.statements().selfContained(messages, defined);
    }

    @Override public String timeAndSeedSql(long timestampMicros, long seed) {
        return "pg_catalog.set_config('" + TimeRewriting.SETTING + "', '" + TimeRewriting.format(timestampMicros) + "', true), "
                + "pg_catalog.setseed(" + WireTxnExecutor.seedValue(seed) + ")";
    }

    @Override public void ensurePositionTable() { org.wanrep.exec.ReplicaPosition.ensure(ctx.backend(), database()); }

    @Override public void catalogChanged() { ctx.classifiers().catalogChanged(database()); }

    @Override public String site() { return ctx.site(); }

    @Override public String orderKey() { return session.orderKey(); }

    @Override public boolean advancesSequence(TableSet tables) { return ctx.classifiers().forDatabase(database()).advancesSequence(tables); }

    @Override public String sequenceStatesSql() { return org.wanrep.exec.WriteSetSql.sequenceStates(TableSet.allTables()); }

    @Override public void putBackSequences(String setvals) throws IOException {
        String sql = "SELECT " + setvals;
        BackendConnection backend = backend();
        try {
            if (backend.status() == 'I' || backend.status() == 'T') {
                PgError e = backend.run(sql);
                if (e == null) return;
                LOG.debug("sequences not set back on the session's backend ({}): as the replica's user", e);
            }
        } catch (IOException | RuntimeException x) {
            LOG.debug("sequences not set back on the session's backend ({}): as the replica's user", x.toString());
        }
        try (java.sql.Connection c = ctx.backend().jdbc(database(), "wanrep-sequences"); java.sql.Statement st = c.createStatement()) {
            st.execute(sql);
        } catch (java.sql.SQLException x) {
            throw new IOException("setting back sequences failed: " + x.getMessage(), x);
        }
    }

    @Override public InteractiveBlock.WriteSets writeSets() { return writeSets; }

    @Override public InteractiveBlock.PreparedWriteSets preparedWriteSets() {
        org.wanrep.exec.WriteSetChannel c = ctx.preparedWriteSets();
        if (c == null) return null;
        String db = database();
        return new InteractiveBlock.PreparedWriteSets() {
            @Override public boolean capturesNow() { return c.capturesPreparedNow(db); }
            @Override public CompletableFuture<org.wanrep.writeset.WriteSet> prepared(String gid) { return c.preparedWriteSet(db, gid); }
        };
    }

    /** This site's write-set shipping as a block sees it. */
    private final class WriteSets implements InteractiveBlock.WriteSets {
        @Override public void capture() { ctx.writeSets().capture(database()); }
        @Override public String tagAndCheckSql(String tag) { return org.wanrep.exec.WriteSetSql.tag(tag) + "; " + checkSql(); }
        @Override public String checkSql() { return org.wanrep.exec.WriteSetSql.checkAndSequences(TableSet.allTables()); }
        @Override public CompletableFuture<org.wanrep.writeset.WriteSet> captured(String tag) { return ctx.writeSets().captured(database(), tag); }
    }
}
