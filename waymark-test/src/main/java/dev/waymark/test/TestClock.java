package dev.waymark.test;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.WeakHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * Waymark's notion of time in a test, moved forward on demand: the real time plus an offset that
 * only {@link #advance} changes. The offset reaches the database through {@link #dataSource}: every
 * connection it hands out carries it in the session setting {@value #SETTING}, which Waymark's SQL
 * reads for sleeps, timeouts, deadlines and leases ({@code waymark_now()}). It is also a
 * {@link Clock}, for Java code that reads the time. Thread-safe.
 *
 * <p>Time keeps running underneath: a test that advances by three days sees sleeps of three days
 * come due at once, and everything shorter too.
 */
public final class TestClock extends Clock {

    /** The PostgreSQL session setting that shifts Waymark's time: an interval, such as {@code 259200 seconds}. */
    public static final String SETTING = "waymark.clock_offset";

    private final AtomicReference<Duration> offset = new AtomicReference<>(Duration.ZERO);
    private final List<Runnable> listeners = new CopyOnWriteArrayList<>();
    /** The offset each open session was given (a fresh session has none: zero). */
    private final Map<Connection, Duration> sessions = Collections.synchronizedMap(new WeakHashMap<>());

    /** A clock at the real time (offset zero). */
    public TestClock() {}

    /**
     * Moves time forward by {@code amount} for every connection of {@link #dataSource} checked out
     * from now on and for {@link #instant()}, then runs the listeners added with {@link #onAdvance}
     * (for instance to wake workers that sleep until the next due time).
     *
     * @throws IllegalArgumentException when {@code amount} is negative: Waymark's time never goes back
     */
    public void advance(Duration amount) {
        if (amount.isNegative()) {
            throw new IllegalArgumentException("a test clock only moves forward, got " + amount);
        }
        offset.updateAndGet(o -> o.plus(amount));
        listeners.forEach(Runnable::run);
    }

    /** How far this clock is ahead of the real time. */
    public Duration offset() {
        return offset.get();
    }

    /** Runs {@code listener} after every {@link #advance}, on the advancing thread. */
    public void onAdvance(Runnable listener) {
        listeners.add(Objects.requireNonNull(listener, "listener"));
    }

    /**
     * {@code dataSource} with this clock's offset set on every connection it hands out (a
     * {@code set_config} when the session's offset differs from the clock's), so Waymark's SQL on
     * those connections sees the moved time.
     */
    public DataSource dataSource(DataSource dataSource) {
        Objects.requireNonNull(dataSource, "dataSource");
        return new ShiftedDataSource(dataSource);
    }

    @Override
    public Instant instant() {
        return Instant.now().plus(offset.get());
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    /** Not supported: a test clock has one zone (UTC). */
    @Override
    public Clock withZone(ZoneId zone) {
        if (ZoneOffset.UTC.equals(zone)) {
            return this;
        }
        throw new UnsupportedOperationException("a TestClock is in UTC only");
    }

    @Override
    public String toString() {
        return "TestClock[offset=" + offset.get() + "]";
    }

    private Connection shifted(Connection connection) throws SQLException {
        try {
            Duration wanted = offset.get();
            // The session keeps the setting: a pooled connection needs it sent only when it changed.
            // Sent in autocommit only, where a rollback cannot undo it behind the cache's back.
            Connection session = connection.isWrapperFor(Connection.class)
                    ? connection.unwrap(Connection.class)
                    : connection;
            if (wanted.equals(sessions.getOrDefault(session, Duration.ZERO))) {
                return connection;
            }
            try (PreparedStatement s = connection.prepareStatement("SELECT set_config(?, ?, false)")) {
                s.setString(1, SETTING);
                s.setString(2, wanted.toMillis() + " milliseconds");
                s.execute();
            }
            if (connection.getAutoCommit()) {
                sessions.put(session, wanted);
            }
        } catch (SQLException e) {
            try {
                connection.close();
            } catch (SQLException closing) {
                e.addSuppressed(closing);
            }
            throw e;
        }
        return connection;
    }

    private final class ShiftedDataSource implements DataSource {
        private final DataSource target;

        ShiftedDataSource(DataSource target) {
            this.target = target;
        }

        @Override
        public Connection getConnection() throws SQLException {
            return shifted(target.getConnection());
        }

        @Override
        public Connection getConnection(String user, String password) throws SQLException {
            return shifted(target.getConnection(user, password));
        }

        @Override
        public PrintWriter getLogWriter() throws SQLException {
            return target.getLogWriter();
        }

        @Override
        public void setLogWriter(PrintWriter out) throws SQLException {
            target.setLogWriter(out);
        }

        @Override
        public void setLoginTimeout(int seconds) throws SQLException {
            target.setLoginTimeout(seconds);
        }

        @Override
        public int getLoginTimeout() throws SQLException {
            return target.getLoginTimeout();
        }

        @Override
        public Logger getParentLogger() throws SQLFeatureNotSupportedException {
            return target.getParentLogger();
        }

        @Override
        public <T> T unwrap(Class<T> type) throws SQLException {
            return type.isInstance(this) ? type.cast(this) : target.unwrap(type);
        }

        @Override
        public boolean isWrapperFor(Class<?> type) throws SQLException {
            return type.isInstance(this) || target.isWrapperFor(type);
        }
    }
}
