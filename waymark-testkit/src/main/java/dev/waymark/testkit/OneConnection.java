package dev.waymark.testkit;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;

/**
 * One real connection handed out as a data source, for tests of what a single PostgreSQL session
 * does across calls: its cached plans, and the statistics it has not reported yet.
 */
public final class OneConnection {

    private OneConnection() {}

    /**
     * A data source whose {@code getConnection()} returns {@code connection} itself, with
     * {@code close()} ignored, so every call of the code under test runs on that session (and inside
     * its open transaction, when autocommit is off). Other {@code DataSource} methods throw
     * {@link UnsupportedOperationException}. The caller closes {@code connection}.
     */
    public static DataSource dataSource(Connection connection) {
        Connection kept = (Connection) Proxy.newProxyInstance(OneConnection.class.getClassLoader(),
                new Class<?>[]{Connection.class}, (proxy, method, args) -> {
                    if (method.getName().equals("close")) {
                        return null;
                    }
                    try {
                        return method.invoke(connection, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        return (DataSource) Proxy.newProxyInstance(OneConnection.class.getClassLoader(),
                new Class<?>[]{DataSource.class}, (proxy, method, args) -> {
                    if (method.getName().equals("getConnection")) {
                        return kept;
                    }
                    throw new UnsupportedOperationException("OneConnection does not support " + method.getName());
                });
    }

    /**
     * Rows of the given tables (regclass names, e.g. {@code "waymark.events"}) that this session
     * fetched by sequential or index scans and has not yet reported to the statistics system (a
     * session reports when idle, never inside a transaction): read it before and after a call inside
     * one transaction and the difference is what the call read.
     */
    public static long rowsRead(Connection connection, String... tables) throws SQLException {
        try (Statement s = connection.createStatement();
                ResultSet rs = s
                        .executeQuery("SELECT coalesce(sum(coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0)), 0)"
                                + " FROM pg_stat_xact_user_tables WHERE relid IN (" + regclasses(tables) + ")")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /**
     * Index blocks of the given tables' indexes that this session has fetched (from shared buffers or
     * disk) in its current transaction ({@code pg_stat_get_xact_blocks_fetched}). An index walk that
     * filters entries inside the index instead of starting at its bound shows here, not in
     * {@link #rowsRead}: entries the index rejects are never fetched from the table.
     */
    public static long indexBlocksFetched(Connection connection, String... tables) throws SQLException {
        try (Statement s = connection.createStatement();
                ResultSet rs = s.executeQuery("SELECT coalesce(sum(pg_stat_get_xact_blocks_fetched(indexrelid)), 0)"
                        + " FROM pg_index WHERE indrelid IN (" + regclasses(tables) + ")")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static String regclasses(String... tables) {
        StringBuilder in = new StringBuilder();
        for (String table : tables) {
            if (!table.matches("[A-Za-z0-9_.\"]+")) {
                throw new IllegalArgumentException("not a table name: " + table);
            }
            in.append(in.isEmpty() ? "" : ", ").append('\'').append(table).append("'::regclass");
        }
        return in.toString();
    }
}
