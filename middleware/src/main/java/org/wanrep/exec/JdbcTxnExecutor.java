package org.wanrep.exec;

import org.wanrep.wire.WireMessage;
import org.apache.commons.dbcp2.BasicDataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.wanrep.txn.Txn;
import org.wanrep.txn.TxnExecutor;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Executes transactions whose work is simple-protocol Query messages through a Commons DBCP2 pool of
 * pgjdbc connections (one connection per transaction while it runs). Replies are not kept: this
 * executor serves sites that execute on behalf of an origin (and tests of the engine); the wire
 * executor serves clients. Blocking JDBC calls run on virtual threads, never on the engine's.
 */
public final class JdbcTxnExecutor implements TxnExecutor, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(JdbcTxnExecutor.class);

    private final BasicDataSource pool = new BasicDataSource();
    private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();

    /** Per-transaction state. */
    private static final class Work {
        Connection conn;
        volatile Statement running;
        final List<String> errors = new ArrayList<>();
    }

    public JdbcTxnExecutor(String jdbcUrl, String user, String password, int poolSize) {
        pool.setUrl(jdbcUrl);
        pool.setUsername(user);
        if (password != null && !password.isEmpty()) pool.setPassword(password);
        pool.setMaxTotal(poolSize);
        pool.setMaxIdle(poolSize);
        pool.setDefaultAutoCommit(false);
        pool.setMaxWait(java.time.Duration.ofSeconds(60));
    }

    private volatile java.util.function.Consumer<String> fatalHandler = reason -> LOG.error("{}", reason);

    /** What to do when this replica may no longer match the others (the site stops). */
    public void onFatal(java.util.function.Consumer<String> f) { this.fatalHandler = f; }

    /** A lost connection (or none at all): not an answer of the database about the transaction. */
    private static boolean connectionLost(SQLException e) {
        return WriteSetChannel.connectionLost(e.getSQLState());
    }

    private static Work work(Txn t) {
        if (t.attachment == null) t.attachment = new Work();
        return (Work) t.attachment;
    }

    @Override public void execute(Txn t, boolean commit, Done done) {
        Work w = work(t);
        threads.execute(() -> {
            try {
                if (w.conn == null) w.conn = pool.getConnection();
                try (Statement st = w.conn.createStatement()) {
                    w.running = st;
                    st.execute("SELECT setseed(" + seedOf(t) + ")");
                    for (WireMessage m : t.work().messages()) {
                        if (m.type() != 'Q') throw new IllegalStateException("the JDBC executor runs simple Query messages only, got '" + (char) m.type() + "'");
                        st.execute(sqlOf(m));
                    }
                } finally {
                    w.running = null;
                }
                done.completed(Outcome.OK);
            } catch (SQLException e) {
                if (connectionLost(e)) {   // not the transaction's fault, and the others commit it: run it again here
                    LOG.warn("{}: connection failed ({}); running it again on a new connection", t, e.toString());
                    closeQuietly(w.conn);
                    w.conn = null;
                    done.completed(Outcome.RETRY);
                    return;
                }
                w.errors.add(e.getSQLState() + " " + e.getMessage());
                done.completed(TxnExecutor.transientState(e.getSQLState()) ? Outcome.RETRY : Outcome.ERROR);
            } catch (RuntimeException e) {
                LOG.error("{}: {}", t, e.toString());
                w.errors.add(e.toString());
                done.completed(Outcome.ERROR);
            }
        });
    }

    /** random() agrees everywhere once every site seeds it the same way in the transaction's session. */
    static double seedOf(Txn t) {
        return (t.request().seed() % 1_000_000L) / 1_000_000.0;
    }

    static String sqlOf(WireMessage m) {
        byte[] p = m.payload();
        int len = p.length > 0 && p[p.length - 1] == 0 ? p.length - 1 : p.length;
        return new String(p, 0, len, StandardCharsets.UTF_8);
    }

    @Override public void cancel(Txn t) {
        Statement st = work(t).running;
        if (st == null) return;
        threads.execute(() -> {
            try {
                st.cancel();
            } catch (SQLException e) {
                LOG.debug("cancel of {}: {}", t, e.toString());
            }
        });
    }

    @Override public void commit(Txn t, Done done) {
        Work w = work(t);
        threads.execute(() -> {
            try {
                w.conn.commit();
                done.completed(Outcome.OK);
            } catch (SQLException e) {
                w.errors.add(e.getSQLState() + " " + e.getMessage());
                if (connectionLost(e)) {   // whether COMMIT took effect here is unknown: this replica may differ
                    String why = t + ": connection to the replica lost during COMMIT (" + e + "); whether it committed here is unknown";
                    LOG.error("{}", why);
                    closeQuietly(w.conn);
                    w.conn = null;
                    fatalHandler.accept("site replica may have diverged: " + why);
                    done.completed(Outcome.ERROR);
                    return;
                }
                done.completed(TxnExecutor.transientState(e.getSQLState()) ? Outcome.RETRY : Outcome.ERROR);
            }
        });
    }

    @Override public void rollback(Txn t, Done done) {
        Work w = work(t);
        threads.execute(() -> {
            try {
                if (w.conn != null) w.conn.rollback();
                done.completed(Outcome.OK);
            } catch (SQLException e) {
                LOG.warn("{}: rollback failed: {}", t, e.toString());
                done.completed(Outcome.ERROR);
            }
        });
    }

    @Override public void finish(Txn t) {
        Work w = work(t);
        Connection c = w.conn;
        w.conn = null;
        if (c != null) threads.execute(() -> {
            try {
                c.close();
            } catch (SQLException e) {
                LOG.debug("returning connection: {}", e.toString());
            }
        });
    }

    private static void closeQuietly(Connection c) {
        if (c == null) return;
        try {
            c.close();
        } catch (SQLException e) {
            LOG.debug("closing a failed connection: {}", e.toString());
        }
    }

    /** The errors the database gave this transaction (for the origin's answer and for tests). */
    public static List<String> errors(Txn t) { return t.attachment == null ? List.of() : List.copyOf(((Work) t.attachment).errors); }

    @Override public void close() throws SQLException {
        threads.shutdown();
        pool.close();
    }
}
