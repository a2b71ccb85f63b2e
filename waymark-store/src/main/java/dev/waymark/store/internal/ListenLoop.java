package dev.waymark.store.internal;

import dev.waymark.core.RetryPolicy;
import dev.waymark.store.QueryPurpose;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The LISTEN thread of a store handle: holds one connection that LISTENs on the schema's channel,
 * hands what arrives to its notifier, runs the fallback tick and the connection's heartbeat (the
 * head watch's probe while the watch is in use), and reconnects with capped exponential backoff for
 * as long as the handle is open. Between its waits it lends the connection ({@link ListenConnection}).
 */
final class ListenLoop {

    private static final Logger log = LoggerFactory.getLogger(ListenLoop.class);
    static final Duration LISTEN_WAIT = Duration.ofMillis(250);
    private static final Duration HEARTBEAT = Duration.ofSeconds(5);
    /** The least time a heartbeat may take before the LISTEN connection counts as dead. */
    private static final Duration MIN_NETWORK_TIMEOUT = Duration.ofSeconds(5);

    private final DataSource dataSource;
    private final String schema;
    private final String channel;
    private final NotifierSettings settings;
    private final QueryCounts counts;
    private final SharedHeadWatch watch;
    private final ListenConnection lending;
    private final Runnable wake;
    private final Runnable tick;
    private final Predicate<String> received;
    private final AtomicLong reconnects = new AtomicLong();
    private volatile boolean closed;

    /**
     * @param wake wakes waiters and the head watch: news that may bring new events
     * @param tick the fallback tick: wakes waiters (the head watch keeps its own timer)
     * @param received handles a payload of the channel; returns whether it asks for a wake
     */
    ListenLoop(DataSource dataSource, String schema, String channel, NotifierSettings settings, QueryCounts counts,
            SharedHeadWatch watch, ListenConnection lending, Runnable wake, Runnable tick,
            Predicate<String> received) {
        this.dataSource = dataSource;
        this.schema = schema;
        this.channel = channel;
        this.settings = settings;
        this.counts = counts;
        this.watch = watch;
        this.lending = lending;
        this.wake = wake;
        this.tick = tick;
        this.received = received;
    }

    /** How many times the LISTEN connection was re-established. */
    long reconnects() {
        return reconnects.get();
    }

    /** Ends the loop at its next wait (the caller interrupts and joins the thread). */
    void stop() {
        closed = true;
    }

    /** The heartbeat's interval: the fallback tick, at most {@link #HEARTBEAT}. */
    private Duration heartbeatInterval() {
        return settings.fallbackPoll().compareTo(HEARTBEAT) < 0 ? settings.fallbackPoll() : HEARTBEAT;
    }

    /** How long a read on the LISTEN connection may block: twice the heartbeat interval, at least 5 s. */
    Duration networkTimeout() {
        Duration twice = heartbeatInterval().multipliedBy(2);
        return twice.compareTo(MIN_NETWORK_TIMEOUT) < 0 ? MIN_NETWORK_TIMEOUT : twice;
    }

    /** The thread's body: listens, and reconnects after every failure, until {@link #stop()}. */
    void run() {
        // reconnects for as long as the handle is open, the delay doubling from the first to the cap
        RetryPolicy reconnect = RetryPolicy.exponential(RetryPolicy.UNLIMITED, settings.reconnectInitial(),
                settings.reconnectMax());
        int failures = 0;
        while (!closed) {
            Connection connection = null;
            int pooledTimeout = -1;
            try {
                connection = dataSource.getConnection();
                if (!connection.getAutoCommit()) {
                    connection.setAutoCommit(true);
                }
                // A half-open connection (a peer or a network path gone without a FIN) would hold the
                // heartbeat's read until TCP gives up, a quarter of an hour on Linux, and with it the
                // fallback tick of every waiter; past this timeout the connection is dropped and replaced.
                pooledTimeout = limitReads(connection);
                ListenerNames.name(connection);
                try (Statement statement = connection.createStatement()) {
                    statement.execute("LISTEN " + channel);
                }
                if (failures > 0) {
                    reconnects.incrementAndGet();
                    log.info("waymark: LISTEN connection for schema {} re-established after {} failure(s)", schema,
                            failures);
                }
                failures = 0;
                wake.run(); // anything committed while we were not listening is now readable
                lending.opened(connection, pooledTimeout < 0 ? -1 : (int) networkTimeout().toMillis());
                listen(connection);
            } catch (SQLException | RuntimeException | Error e) {
                // an Error too: this thread carries the remote wakes and the fallback tick of every
                // waiter of the handle; if it ended, they would all sleep out their timeouts for good
                if (closed) {
                    break;
                }
                failures = Math.min(failures + 1, RetryPolicy.UNLIMITED - 1);
                long backoffMillis = reconnect.delayBefore(failures).toMillis();
                wake.run();
                log.warn("waymark: LISTEN connection for schema {} failed (attempt {}), retrying in {} ms: {}",
                        schema, failures, backoffMillis, e.toString());
                lending.closing();
                try {
                    Thread.sleep(backoffMillis);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    break;
                }
            } finally {
                lending.closing();
                close(connection, pooledTimeout);
            }
        }
    }

    private void listen(Connection connection) throws SQLException {
        PGConnection pg = connection.unwrap(PGConnection.class);
        long tickNanos = settings.fallbackPoll().toNanos();
        long heartbeatNanos = heartbeatInterval().toNanos();
        long lastTick = System.nanoTime();
        long lastHeartbeat = lastTick;
        try (Statement heartbeat = connection.createStatement()) {
            watch.listening(true);
            while (!closed) {
                // Short waits keep close() prompt whatever the fallback interval is; a probing
                // heartbeat is waited for to the millisecond, to come before the watch's own timer.
                long wait = Math.min(LISTEN_WAIT.toMillis(), Math.max(1, settings.fallbackPoll().toMillis()));
                if (watch.active()) {
                    wait = Math.min(wait, TimeUnit.NANOSECONDS.toMillis(watch.heartbeatDue(heartbeatNanos)
                            - System.nanoTime()));
                }
                PGNotification[] notifications;
                lending.lockForListener();
                try {
                    notifications = pg.getNotifications((int) Math.max(1, wait));
                } finally {
                    lending.unlockForListener();
                }
                long now = System.nanoTime();
                boolean woken = false;
                if (notifications != null) {
                    for (PGNotification n : notifications) {
                        woken |= received.test(n.getParameter());
                    }
                }
                boolean ticked = now - lastTick >= tickNanos;
                if (ticked) {
                    lastTick = now;
                }
                if (woken) {
                    wake.run();
                } else if (ticked) {
                    tick.run(); // the head watch keeps its own timer
                }
                // The heartbeat notices a dead backend even when nobody notifies. While the head watch is
                // in use, its probe is the heartbeat, due an interval after the last probe (on whatever
                // connection), so that an idle handle sends one statement per interval, not two.
                boolean probing = watch.active();
                if (probing ? now - watch.heartbeatDue(heartbeatNanos) >= 0 : now - lastHeartbeat >= heartbeatNanos) {
                    lending.lockForListener();
                    try {
                        if (!probing || !watch.probeOn(connection)) {
                            counts.count(QueryPurpose.NOTIFY);
                            heartbeat.execute("SELECT 1");
                        }
                    } finally {
                        lending.unlockForListener();
                    }
                    lastHeartbeat = now;
                }
            }
        } finally {
            watch.listening(false);
        }
    }

    /**
     * Sets the network timeout of the LISTEN connection and returns the one it had, or -1 when the
     * driver or pool does not support it (the connection is then used without one, as before).
     */
    private int limitReads(Connection connection) {
        try {
            int pooled = connection.getNetworkTimeout();
            connection.setNetworkTimeout(Runnable::run, (int) networkTimeout().toMillis());
            return pooled;
        } catch (SQLException | UnsupportedOperationException e) {
            log.debug("waymark: no network timeout on the LISTEN connection for schema {}: {}", schema, e.toString());
            return -1;
        }
    }

    private static void close(Connection connection, int pooledTimeout) {
        if (connection == null) {
            return;
        }
        try {
            if (!connection.isClosed()) {
                try (Statement statement = connection.createStatement()) {
                    statement.execute("UNLISTEN *");
                    statement.execute("RESET application_name");
                }
            }
        } catch (SQLException ignored) {
            // the connection is broken; closing it below lets the pool discard it
        }
        try {
            if (pooledTimeout >= 0 && !connection.isClosed()) {
                connection.setNetworkTimeout(Runnable::run, pooledTimeout); // as the pool handed it out
            }
        } catch (SQLException ignored) {
            // broken: the pool discards it
        }
        try {
            connection.close();
        } catch (SQLException e) {
            log.debug("waymark: closing the LISTEN connection failed", e);
        }
    }
}
