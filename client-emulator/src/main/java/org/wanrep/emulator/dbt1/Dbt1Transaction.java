package org.wanrep.emulator.dbt1;

import org.wanrep.emulator.workload.Transaction;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * One DBT-1 interaction with its arguments: a single request {@code SELECT * FROM fn(...)} in
 * autocommit, the time written as now() in the call text so the middleware fixes it to the
 * origin's time (a function body must not read the clock).
 */
public final class Dbt1Transaction implements Transaction {
    private final Interaction interaction;
    private final List<Object> args;

    /** {@code args}: one per parameter type of the interaction (null allowed; int[] for arrays). */
    Dbt1Transaction(Interaction interaction, List<Object> args) {
        if (args.size() != interaction.parameterTypes().size())
            throw new IllegalArgumentException(interaction.function() + " takes " + interaction.parameterTypes().size()
                    + " arguments, got " + args.size());
        this.interaction = interaction;
        this.args = Collections.unmodifiableList(new ArrayList<>(args));
    }

    public Interaction interaction() { return interaction; }

    public List<Object> args() { return args; }

    @Override public String type() { return interaction.type(); }

    @Override public boolean readOnly() { return interaction.readOnly(); }

    @Override public void execute(Connection c) throws SQLException {
        run(c, "now()");
    }

    /**
     * Runs the call with {@code timeSql} as the time argument (tests pass the same literal to every
     * replica) and returns the number of rows it produced.
     */
    public int run(Connection c, String timeSql) throws SQLException {
        String sql = timeSql.equals("now()") ? interaction.callWithNow() : interaction.call(timeSql);
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < args.size(); i++) bind(c, ps, i + 1, args.get(i));
            int rows = 0;
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) rows++;
            }
            return rows;
        }
    }

    private static void bind(Connection c, PreparedStatement ps, int index, Object v) throws SQLException {
        switch (v) {
            // untyped null: the cast in the call text gives it the parameter's type
            case null -> ps.setNull(index, Types.OTHER);
            case int[] a -> {
                Integer[] boxed = new Integer[a.length];
                for (int i = 0; i < a.length; i++) boxed[i] = a[i];
                Array array = c.createArrayOf("int4", boxed);
                ps.setArray(index, array);
            }
            default -> ps.setObject(index, v);
        }
    }

    @Override public String toString() {
        StringBuilder b = new StringBuilder(interaction.function()).append('(');
        for (int i = 0; i < args.size(); i++) {
            if (i > 0) b.append(", ");
            Object v = args.get(i);
            b.append(v instanceof int[] a ? Arrays.toString(a) : v instanceof String s ? "'" + s + "'" : String.valueOf(v));
        }
        return b.append(interaction.takesTime() ? ", now())" : ")").toString();
    }
}
