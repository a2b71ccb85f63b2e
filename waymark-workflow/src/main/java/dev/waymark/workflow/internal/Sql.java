package dev.waymark.workflow.internal;

import dev.waymark.store.plumbing.Jdbc;
import dev.waymark.store.plumbing.SqlErrors;
import dev.waymark.store.plumbing.TransactionBounds;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import javax.sql.DataSource;

/** Statement plumbing: one pooled connection per call, failures translated by SQLSTATE. */
final class Sql {

    @FunctionalInterface
    interface Binder {
        void bind(PreparedStatement ps) throws SQLException;
    }

    @FunctionalInterface
    interface Reader<T> {
        T read(ResultSet rs) throws SQLException;
    }

    private final DataSource dataSource;
    private final String schema;
    private final TransactionBounds bounds;

    Sql(DataSource dataSource, String schema, TransactionBounds bounds) {
        this.dataSource = dataSource;
        this.schema = schema;
        this.bounds = bounds;
    }

    String schema() {
        return schema;
    }

    /** Runs a query (autocommit: one statement, one transaction) and reads its result set. */
    <T> T query(String action, String sql, Binder binder, Reader<T> reader) {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            binder.bind(ps);
            try (ResultSet rs = ps.executeQuery()) {
                return reader.read(rs);
            }
        } catch (SQLException e) {
            throw SqlErrors.translate(e, action, schema);
        }
    }

    /** Runs an update and returns the row count. */
    int update(String action, String sql, Binder binder) {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
            binder.bind(ps);
            return ps.executeUpdate();
        } catch (SQLException e) {
            throw SqlErrors.translate(e, action, schema);
        }
    }

    /** Runs {@code query}, which returns one number, and returns it. */
    long count(String action, String query) {
        return query(action, query, ps -> {}, rs -> {
            rs.next();
            return rs.getLong(1);
        });
    }

    /**
     * Runs {@code work} in one transaction on one pooled connection, bounded by the server (a process
     * frozen inside it holds no lock and no reader's horizon longer than the bound); any failure
     * rolls it back.
     */
    <T> T inTransaction(String action, Jdbc.Work<T> work) {
        return Jdbc.inTransaction(dataSource, schema, bounds, action, work);
    }

    static Instant instant(ResultSet rs, String column) throws SQLException {
        Timestamp t = rs.getTimestamp(column);
        return t == null ? null : t.toInstant();
    }

}
