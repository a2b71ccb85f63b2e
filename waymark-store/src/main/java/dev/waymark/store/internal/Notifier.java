package dev.waymark.store.internal;

import dev.waymark.store.WakeSignal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The store handle's wake signal (DESIGN decision 2). Appends never NOTIFY inside their
 * transaction: after commit they signal local waiters at once and ask for one coalesced NOTIFY,
 * sent from a background thread at most once per window. One LISTEN connection per handle fans
 * notifications out to local waiters; it reconnects with capped exponential backoff. A fallback
 * tick wakes waiters every {@code fallbackPoll} so a lost notification only delays them.
 */
public final class Notifier implements WakeSignal, AutoCloseable {

    /** The application_name of the LISTEN connection, visible in pg_stat_activity. */
    public static final String LISTENER_APPLICATION_NAME = "waymark-listener";

    private static final Logger log = LoggerFactory.getLogger(Notifier.class);
    private static final Duration LISTEN_WAIT = Duration.ofMillis(250);
    private static final Duration HEARTBEAT = Duration.ofSeconds(5);

    private final DataSource dataSource;
    private final String schema;
    private final String channel;
    private final String handleId = UUID.randomUUID().toString();
    private final NotifierSettings settings;

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final AtomicLong generation = new AtomicLong();

    private final AtomicBoolean sendPending = new AtomicBoolean();
    private final ScheduledExecutorService sender;
    private final AtomicBoolean listenerStarted = new AtomicBoolean();
    private final AtomicLong reconnects = new AtomicLong();
    private volatile Thread listener;
    private volatile boolean closed;

    /**
     * @param settings the windows and intervals
     */
    public Notifier(DataSource dataSource, String schema, NotifierSettings settings) {
        this.dataSource = dataSource;
        this.schema = schema;
        this.channel = channel(schema);
        this.settings = settings;
        this.sender = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform()
                .name("waymark-notify-" + schema).daemon(true).factory());
    }

    /** The NOTIFY channel of a schema. */
    static String channel(String schema) {
        String name = "waymark_" + schema;
        return name.length() > 63 ? name.substring(0, 63) : name;
    }

    @Override
    public long generation() {
        return generation.get();
    }

    @Override
    public long awaitAfter(long seenGeneration, Duration timeout) throws InterruptedException {
        startListener();
        long remaining = timeout.toNanos();
        lock.lock();
        try {
            // Closed, it still waits out the timeout: close() moved the generation once to wake the
            // waiters of that moment, and a caller that goes on polling a closed handle must not spin.
            while (generation.get() == seenGeneration && remaining > 0) {
                remaining = changed.awaitNanos(remaining);
            }
            return generation.get();
        } finally {
            lock.unlock();
        }
    }

    /** Wakes local waiters. */
    public void signal() {
        lock.lock();
        try {
            generation.incrementAndGet();
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Called after an append committed: wake local waiters now, other handles within the window. */
    public void appended() {
        signal();
        if (settings.enabled() && !closed && sendPending.compareAndSet(false, true)) {
            try {
                sender.schedule(this::sendNotify, settings.coalesceWindow().toNanos(), TimeUnit.NANOSECONDS);
            } catch (java.util.concurrent.RejectedExecutionException e) {
                sendPending.set(false); // closing
            }
        }
    }

    /** How many times the LISTEN connection was re-established. */
    public long reconnects() {
        return reconnects.get();
    }

    private void sendNotify() {
        sendPending.set(false);
        try (Connection connection = dataSource.getConnection();
                PreparedStatement statement = connection.prepareStatement("SELECT pg_notify(?, ?)")) {
            statement.setString(1, channel);
            statement.setString(2, handleId);
            statement.execute();
            if (!connection.getAutoCommit()) {
                connection.commit();
            }
        } catch (SQLException | RuntimeException e) {
            // Other handles fall back to their poll tick; nothing is lost.
            log.warn("waymark: could not send the wake-up NOTIFY for schema {}: {}", schema, e.toString());
        }
    }

    /** Starts the LISTEN thread if notifications are enabled and it is not running yet. */
    public void startListener() {
        if (!settings.enabled() || closed || !listenerStarted.compareAndSet(false, true)) {
            return;
        }
        listener = Thread.ofPlatform().name("waymark-listen-" + schema).daemon(true).start(this::listenLoop);
    }

    private void listenLoop() {
        long backoffMillis = settings.reconnectInitial().toMillis();
        int failures = 0;
        while (!closed) {
            Connection connection = null;
            try {
                connection = dataSource.getConnection();
                if (!connection.getAutoCommit()) {
                    connection.setAutoCommit(true);
                }
                try (Statement statement = connection.createStatement()) {
                    statement.execute("SET application_name = '" + LISTENER_APPLICATION_NAME + "'");
                    statement.execute("LISTEN " + channel);
                }
                if (failures > 0) {
                    reconnects.incrementAndGet();
                    log.info("waymark: LISTEN connection for schema {} re-established after {} failure(s)", schema,
                            failures);
                }
                failures = 0;
                backoffMillis = settings.reconnectInitial().toMillis();
                signal(); // anything committed while we were not listening is now readable
                listen(connection);
            } catch (SQLException | RuntimeException | Error e) {
                // an Error too: this thread carries the remote wakes and the fallback tick of every
                // waiter of the handle; if it ended, they would all sleep out their timeouts for good
                if (closed) {
                    break;
                }
                failures++;
                signal();
                log.warn("waymark: LISTEN connection for schema {} failed (attempt {}), retrying in {} ms: {}",
                        schema, failures, backoffMillis, e.toString());
                try {
                    Thread.sleep(backoffMillis);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    break;
                }
                backoffMillis = Math.min(settings.reconnectMax().toMillis(), backoffMillis * 2);
            } finally {
                closeListener(connection);
            }
        }
    }

    private void listen(Connection connection) throws SQLException {
        PGConnection pg = connection.unwrap(PGConnection.class);
        long tickNanos = settings.fallbackPoll().toNanos();
        long heartbeatNanos = Math.min(tickNanos, HEARTBEAT.toNanos());
        long lastTick = System.nanoTime();
        long lastHeartbeat = lastTick;
        try (Statement heartbeat = connection.createStatement()) {
            while (!closed) {
                // Short waits keep close() prompt whatever the fallback interval is.
                PGNotification[] notifications = pg.getNotifications((int) Math.min(LISTEN_WAIT.toMillis(),
                        Math.max(1, settings.fallbackPoll().toMillis())));
                long now = System.nanoTime();
                boolean wake = false;
                if (notifications != null) {
                    for (PGNotification n : notifications) {
                        wake |= !handleId.equals(n.getParameter());
                    }
                }
                if (now - lastTick >= tickNanos) {
                    wake = true;
                    lastTick = now;
                }
                if (wake) {
                    signal();
                }
                if (now - lastHeartbeat >= heartbeatNanos) {
                    heartbeat.execute("SELECT 1"); // notices a dead backend even when nobody notifies
                    lastHeartbeat = now;
                }
            }
        }
    }

    private void closeListener(Connection connection) {
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
            connection.close();
        } catch (SQLException e) {
            log.debug("waymark: closing the LISTEN connection failed", e);
        }
    }

    /** Stops the threads, sending a pending notification first. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        signal();
        sender.shutdown();
        try {
            if (!sender.awaitTermination(5, TimeUnit.SECONDS)) {
                sender.shutdownNow();
            }
            Thread thread = listener;
            if (thread != null) {
                thread.interrupt();
                thread.join(LISTEN_WAIT.toMillis() + HEARTBEAT.toMillis());
                if (thread.isAlive()) {
                    log.warn("waymark: LISTEN thread for schema {} did not stop in time", schema);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
