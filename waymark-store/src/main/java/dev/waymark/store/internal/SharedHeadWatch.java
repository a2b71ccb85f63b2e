package dev.waymark.store.internal;

import dev.waymark.store.GlobalPosition;
import dev.waymark.store.HeadProbe;
import dev.waymark.store.HeadWatch;
import dev.waymark.store.QueryPurpose;
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
 * The {@link HeadWatch} of a store handle: one thread that probes the head when the handle is
 * woken, asked, or the fallback interval passed since its last probe, and publishes the result.
 * Its own timer, not the notifier's tick, bounds the delay after a lost notification: that tick
 * runs on the LISTEN thread, which sleeps out its reconnect backoff while the connection is down.
 */
final class SharedHeadWatch implements HeadWatch, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(SharedHeadWatch.class);
    /** The first recheck while committed events are hidden behind the horizon. */
    private static final Duration FIRST_HIDDEN_RECHECK = Duration.ofMillis(10);

    private final DataSource dataSource;
    private final String schema;
    private final Duration fallback;
    private final QueryCounts counts;
    private final String sql;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final AtomicBoolean started = new AtomicBoolean();
    private volatile HeadProbe latest = HeadProbe.NONE;
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
            while (latest.sequence() == sequence && remaining > 0 && !closed) {
                remaining = changed.awaitNanos(remaining);
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

    private void start() {
        if (!closed && started.compareAndSet(false, true)) {
            thread = Thread.ofPlatform().name("waymark-head-" + schema).daemon(true).start(this::run);
        }
    }

    private void run() {
        long nextDue = System.nanoTime();
        Duration hiddenBackoff = null;
        boolean failing = false;
        while (!closed) {
            lock.lock();
            try {
                long wait;
                while (!closed && !dirty && (wait = nextDue - System.nanoTime()) > 0) {
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
            HeadProbe probe;
            try {
                probe = probe(latest.sequence() + 1);
            } catch (RuntimeException e) { // a store error, or a bug: the watch must go on
                if (!failing) {
                    log.warn("waymark: the head probe of schema {} failed, retrying within {} ms: {}", schema,
                            fallback.toMillis(), e.toString());
                }
                failing = true;
                nextDue = System.nanoTime() + fallback.toNanos();
                continue;
            }
            if (failing) {
                log.info("waymark: the head probe of schema {} works again", schema);
                failing = false;
            }
            if (probe.hiddenEvents()) {
                hiddenBackoff = hiddenBackoff == null ? FIRST_HIDDEN_RECHECK : hiddenBackoff.multipliedBy(2);
                if (hiddenBackoff.compareTo(fallback) > 0) {
                    hiddenBackoff = fallback;
                }
            } else {
                hiddenBackoff = null;
            }
            nextDue = System.nanoTime() + (hiddenBackoff != null ? hiddenBackoff : fallback).toNanos();
            publish(probe);
        }
    }

    private void publish(HeadProbe probe) {
        lock.lock();
        try {
            latest = probe;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    private HeadProbe probe(long sequence) {
        counts.count(QueryPurpose.PROBE);
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            java.sql.Array array = rs.getArray(1);
            GlobalPosition head = GlobalPosition.START;
            if (array != null) {
                String[] position = (String[]) array.getArray();
                head = new GlobalPosition(Long.parseLong(position[0]), Long.parseLong(position[1]));
            }
            GlobalPosition horizon = new GlobalPosition(Long.parseLong(rs.getString(2)), 0);
            return new HeadProbe(sequence, head, horizon, rs.getBoolean(3));
        } catch (SQLException e) {
            throw SqlErrors.translate(e, "probe the head", schema);
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
