package dev.waymark.store.internal;

import dev.waymark.store.GlobalPosition;
import dev.waymark.store.HeadProbe;
import dev.waymark.store.HeadWatch;
import dev.waymark.store.QueryPurpose;
import dev.waymark.store.plumbing.Schema;
import dev.waymark.store.plumbing.SqlErrors;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link HeadWatch} of a store handle: one thread that probes the head on a pooled connection
 * when the handle is woken or asked, and when the fallback interval passed since the last probe;
 * while the LISTEN connection is up, the listener's heartbeat is the probe (see
 * {@link #probeOn(Connection)}), so an idle handle sends one statement per fallback interval, not a
 * heartbeat and a probe; this thread's timer then waits {@link #LISTENER_GRACE} longer. Its own timer, not the notifier's tick, bounds the delay after a lost
 * notification: the tick runs on the LISTEN thread, which sleeps out its reconnect backoff while
 * the connection is down.
 */
final class SharedHeadWatch implements HeadWatch, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(SharedHeadWatch.class);
    /** The first recheck while committed events are hidden behind the horizon. */
    private static final Duration FIRST_HIDDEN_RECHECK = Duration.ofMillis(10);
    /** How much later than the LISTEN thread's heartbeat the watch's own timer probes while it is up. */
    static final Duration LISTENER_GRACE = Duration.ofMillis(250);

    private final DataSource dataSource;
    private final String schema;
    private final Duration fallback;
    private final QueryCounts counts;
    private final String sql;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    /** Signalled when a probe finds the head moved: what idle readers wait on. */
    private final Condition moved = lock.newCondition();
    private final AtomicBoolean started = new AtomicBoolean();
    private volatile HeadProbe latest = HeadProbe.NONE;
    /** When the last probe was published (System.nanoTime()). */
    private volatile long lastProbe = System.nanoTime();
    /** The recheck delay while committed events are hidden, or null: guarded by {@link #lock}. */
    private Duration hiddenBackoff;
    /** Whether the LISTEN thread runs the probe as its heartbeat: guarded by {@link #lock}. */
    private boolean listenerUp;
    /** Set by a wake or a request, cleared when a probe starts: guarded by {@link #lock}. */
    private boolean dirty = true;
    private volatile boolean closed;
    private volatile Thread thread;

    SharedHeadWatch(DataSource dataSource, String schema, Duration fallback, QueryCounts counts) {
        this.dataSource = dataSource;
        this.schema = schema;
        this.fallback = fallback;
        this.counts = counts;
        String q = Schema.quote(schema);
        // One statement, one snapshot: read_head and has_hidden_events are STABLE functions, which
        // run on the snapshot of the statement that calls them, the one pg_current_snapshot() returns.
        this.sql = "SELECT " + q + ".read_head(), pg_snapshot_xmin(pg_current_snapshot())::text, " + q
                + ".has_hidden_events()";
    }

    @Override
    public HeadProbe latest() {
        start();
        return latest;
    }

    @Override
    public HeadProbe awaitAfter(long sequence, Duration timeout) throws InterruptedException {
        start();
        long remaining = timeout.toNanos();
        lock.lock();
        try {
            // Closed, it still waits out the timeout: a reader that goes on waiting on a closed
            // handle must not spin.
            while (latest.sequence() == sequence && remaining > 0) {
                remaining = changed.awaitNanos(remaining);
            }
            return latest;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public HeadProbe awaitHeadPast(GlobalPosition head, Duration timeout) throws InterruptedException {
        start();
        long remaining = timeout.toNanos();
        lock.lock();
        try {
            // Closed, it still waits out the timeout, as awaitAfter does: no spinning caller.
            while (!latest.head().isAfter(head) && remaining > 0) {
                remaining = moved.awaitNanos(remaining);
            }
            return latest;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void request() {
        start();
        woken();
    }

    @Override
    public Duration probeInterval() {
        return fallback;
    }

    /** The handle was woken: new events may be readable. */
    void woken() {
        lock.lock();
        try {
            dirty = true;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Whether anyone uses the watch (its thread runs). */
    boolean active() {
        return started.get() && !closed;
    }

    /**
     * When the LISTEN thread's heartbeat should next run, as a probe ({@link System#nanoTime()}):
     * {@code interval} after the last probe, on whatever connection it ran.
     */
    long heartbeatDue(long intervalNanos) {
        return lastProbe + intervalNanos;
    }

    /**
     * The LISTEN thread is up and runs the probe as its heartbeat ({@code true}), or is not (its
     * connection failed, it sleeps out its reconnect backoff): the watch's own timer then waits
     * {@link #LISTENER_GRACE} longer, so that the two do not both probe each interval.
     */
    void listening(boolean up) {
        lock.lock();
        try {
            listenerUp = up;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Runs the probe on the LISTEN connection as its heartbeat and publishes it. A failure of the
     * connection is thrown (the listener reconnects); any other failure (the schema not migrated,
     * say) returns false, and the caller sends its plain heartbeat instead.
     */
    boolean probeOn(Connection listening) throws SQLException {
        try {
            publish(probe(listening));
            return true;
        } catch (SQLException e) {
            String state = e.getSQLState();
            if (state == null || state.startsWith("08") || state.startsWith("57")) {
                throw e;
            }
            log.debug("waymark: the head probe of schema {} on the LISTEN connection failed: {}", schema, e.toString());
            return false;
        }
    }

    private void start() {
        if (!closed && started.compareAndSet(false, true)) {
            thread = Thread.ofPlatform().name("waymark-head-" + schema).daemon(true).start(this::run);
        }
    }

    private void run() {
        boolean failing = false;
        long retryAt = 0;
        while (!closed) {
            lock.lock();
            try {
                long wait;
                while (!closed && !dirty && (wait = Math.max(retryAt, due()) - System.nanoTime()) > 0) {
                    changed.awaitNanos(wait);
                }
                dirty = false;
            } catch (InterruptedException e) {
                return; // close()
            } finally {
                lock.unlock();
            }
            if (closed) {
                return;
            }
            try (Connection c = dataSource.getConnection()) {
                publish(probe(c));
                retryAt = 0;
                if (failing) {
                    log.info("waymark: the head probe of schema {} works again", schema);
                    failing = false;
                }
            } catch (SQLException | RuntimeException e) { // a store error, or a bug: the watch must go on
                if (!failing) {
                    log.warn("waymark: the head probe of schema {} failed, retrying within {} ms: {}", schema,
                            fallback.toMillis(), e instanceof SQLException s
                                    ? SqlErrors.translate(s, "probe the head",
                                            schema).toString()
                                    : e.toString());
                }
                failing = true;
                retryAt = System.nanoTime() + fallback.toNanos();
            }
        }
    }

    /** When the next probe is due without a wake: guarded by {@link #lock}. */
    private long due() {
        if (hiddenBackoff != null) {
            return lastProbe + hiddenBackoff.toNanos();
        }
        // While the LISTEN thread probes as its heartbeat, this timer is the net under it (a
        // heartbeat stuck on a half-open connection): a lost notification then costs at most the
        // fallback interval and the grace.
        return lastProbe + fallback.toNanos() + (listenerUp ? LISTENER_GRACE.toNanos() : 0);
    }

    private void publish(ProbeRow row) {
        lock.lock();
        try {
            boolean headMoved = !row.head().equals(latest.head());
            latest = new HeadProbe(latest.sequence() + 1, row.head(), row.horizon(), row.hidden());
            if (headMoved) {
                moved.signalAll();
            }
            lastProbe = System.nanoTime();
            if (row.hidden()) {
                // the end of the transaction that hides them signals nobody: look again soon
                hiddenBackoff = hiddenBackoff == null ? FIRST_HIDDEN_RECHECK : hiddenBackoff.multipliedBy(2);
                if (hiddenBackoff.compareTo(fallback) > 0) {
                    hiddenBackoff = fallback;
                }
            } else {
                hiddenBackoff = null;
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    private record ProbeRow(GlobalPosition head, GlobalPosition horizon, boolean hidden) {}

    private ProbeRow probe(Connection c) throws SQLException {
        counts.count(QueryPurpose.PROBE);
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return new ProbeRow(EventReader.position(rs.getArray(1)),
                    new GlobalPosition(Long.parseLong(rs.getString(2)), 0), rs.getBoolean(3));
        }
    }

    @Override
    public void close() {
        closed = true;
        woken();
        Thread t = thread;
        if (t != null) {
            t.interrupt();
            try {
                if (!t.join(Duration.ofSeconds(5))) {
                    log.warn("waymark: the head probe thread of schema {} did not stop in time", schema);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
