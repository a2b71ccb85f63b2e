package dev.waymark.store.internal;

import dev.waymark.core.RetryPolicy;
import dev.waymark.store.QueryPurpose;
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
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The store handle's wake signal (docs/ARCHITECTURE.md, "Wake-ups"). Appends never NOTIFY
 * inside their transaction: after commit they signal local waiters at once and ask for one coalesced NOTIFY,
 * sent from a background thread at most once per window. One LISTEN connection per handle fans
 * notifications out to local waiters; it reconnects with capped exponential backoff. A fallback
 * tick wakes waiters every {@code fallbackPoll} so a lost notification only delays them (run by the
 * LISTEN thread, or with notifications disabled by the otherwise idle NOTIFY thread). The same
 * channel carries broadcasts ({@link #broadcast}): a payload that starts with {@link #BROADCAST}
 * names its sender, a topic and a message, and wakes nobody.
 */
public final class Notifier implements WakeSignal, AutoCloseable {

    /**
     * Waymark's role in the application_name of the LISTEN connection, visible in pg_stat_activity:
     * the whole name when the pool set none (or pgjdbc's default), else appended to the application's
     * name as {@code <application>/waymark-listener} (see {@link #listenerApplicationName}).
     */
    public static final String LISTENER_APPLICATION_NAME = "waymark-listener";

    /** pgjdbc's application_name when the application set none: not the application's name. */
    private static final String DRIVER_DEFAULT_APPLICATION_NAME = "PostgreSQL JDBC Driver";
    /** Postgres keeps the first 63 bytes of an application_name. */
    private static final int MAX_APPLICATION_NAME_BYTES = 63;

    private static final Logger log = LoggerFactory.getLogger(Notifier.class);
    private static final Duration LISTEN_WAIT = Duration.ofMillis(250);
    private static final Duration HEARTBEAT = Duration.ofSeconds(5);
    /** The least time a heartbeat may take before the LISTEN connection counts as dead. */
    private static final Duration MIN_NETWORK_TIMEOUT = Duration.ofSeconds(5);
    /** Starts a broadcast payload: {@code BROADCAST + sender + SEP + topic + SEP + message}. */
    private static final String BROADCAST = "\u001Eb";
    private static final char SEP = '\u001F';

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
    private final BroadcastListeners listeners = new BroadcastListeners();
    private final QueryCounts counts;
    /** Woken on every wake that may bring new events (not on the fallback tick); its probe is the heartbeat. */
    private final SharedHeadWatch watch;

    /**
     * @param settings the windows and intervals
     * @param counts where the NOTIFYs and heartbeats are counted
     * @param watch the handle's head watch: woken on every wake that may bring new events (an append
     *     of this handle, a NOTIFY of another, a (re)connect or failure of the LISTEN connection; not
     *     the fallback tick), and its probe is the LISTEN connection's heartbeat while it is in use
     */
    Notifier(DataSource dataSource, String schema, NotifierSettings settings, QueryCounts counts,
            SharedHeadWatch watch) {
        this.dataSource = dataSource;
        this.schema = schema;
        this.counts = counts;
        this.watch = watch;
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

    /** Wakes local waiters for news that may bring new events. */
    private void wake() {
        signal();
        watch.woken();
    }

    /** Called after an append committed: wake local waiters now, other handles within the window. */
    public void appended() {
        wake();
        if (settings.enabled() && !closed && sendPending.compareAndSet(false, true)) {
            try {
                sender.schedule(this::sendNotify, settings.coalesceWindow().toNanos(), TimeUnit.NANOSECONDS);
            } catch (java.util.concurrent.RejectedExecutionException e) {
                sendPending.set(false); // closing
            }
        }
    }

    /**
     * Calls this handle's listeners of {@code topic} with {@code message} at once, then sends it to
     * the other handles on the schema in a NOTIFY of its own (not coalesced). The NOTIFY goes out
     * whatever a local listener throws (a virtual-machine error escapes, after it), and a failed
     * NOTIFY is logged, not thrown. Arguments are validated by the caller.
     */
    public void broadcast(String topic, String message) {
        try {
            listeners.deliver(topic, message);
        } finally {
            if (settings.enabled() && !closed) {
                try {
                    sendPayload(BROADCAST + handleId + SEP + topic + SEP + message);
                } catch (SQLException | RuntimeException e) {
                    log.warn("waymark: could not broadcast on topic {} for schema {}: {}", topic, schema, e.toString());
                }
            }
        }
    }

    /**
     * Adds a listener of {@code topic} and starts the LISTEN thread; the returned action removes
     * this registration, and only it, however often it runs.
     */
    public Runnable onBroadcast(String topic, Consumer<String> listener) {
        Runnable remove = listeners.add(topic, listener);
        startListener();
        return remove;
    }

    /** Handles a payload of the channel; returns whether it asks for a wake (another handle's append). */
    private boolean received(String payload) {
        if (payload == null || !payload.startsWith(BROADCAST)) {
            return !handleId.equals(payload);
        }
        int first = payload.indexOf(SEP, BROADCAST.length());
        int second = first < 0 ? -1 : payload.indexOf(SEP, first + 1);
        if (second < 0) {
            log.warn("waymark: ignored a malformed broadcast on schema {}", schema);
            return false;
        }
        if (!handleId.equals(payload.substring(BROADCAST.length(), first))) { // our own: the sender delivers it
            listeners.deliver(payload.substring(first + 1, second), payload.substring(second + 1));
        }
        return false;
    }

    /** How many times the LISTEN connection was re-established. */
    public long reconnects() {
        return reconnects.get();
    }

    private void sendNotify() {
        sendPending.set(false);
        try {
            sendPayload(handleId);
        } catch (SQLException | RuntimeException e) {
            // Other handles fall back to their poll tick; nothing is lost.
            log.warn("waymark: could not send the wake-up NOTIFY for schema {}: {}", schema, e.toString());
        }
    }

    /** Sends {@code payload} on the channel in a transaction of its own. */
    private void sendPayload(String payload) throws SQLException {
        counts.count(QueryPurpose.NOTIFY);
        try (Connection connection = dataSource.getConnection();
                PreparedStatement statement = connection.prepareStatement("SELECT pg_notify(?, ?)")) {
            statement.setString(1, channel);
            statement.setString(2, payload);
            statement.execute();
            if (!connection.getAutoCommit()) {
                connection.commit();
            }
        }
    }

    /**
     * Starts the LISTEN thread, which also runs the fallback tick, if it is not running yet; with
     * notifications disabled, starts the fallback tick alone on the (then idle) NOTIFY thread.
     */
    public void startListener() {
        if (closed || !listenerStarted.compareAndSet(false, true)) {
            return;
        }
        if (!settings.enabled()) {
            long tick = settings.fallbackPoll().toNanos();
            try {
                sender.scheduleAtFixedRate(this::signal, tick, tick, TimeUnit.NANOSECONDS);
            } catch (java.util.concurrent.RejectedExecutionException e) {
                // closing
            }
            return;
        }
        listener = Thread.ofPlatform().name("waymark-listen-" + schema).daemon(true).start(this::listenLoop);
    }

    private void listenLoop() {
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
                nameListener(connection);
                try (Statement statement = connection.createStatement()) {
                    statement.execute("LISTEN " + channel);
                }
                if (failures > 0) {
                    reconnects.incrementAndGet();
                    log.info("waymark: LISTEN connection for schema {} re-established after {} failure(s)", schema,
                            failures);
                }
                failures = 0;
                wake(); // anything committed while we were not listening is now readable
                listen(connection);
            } catch (SQLException | RuntimeException | Error e) {
                // an Error too: this thread carries the remote wakes and the fallback tick of every
                // waiter of the handle; if it ended, they would all sleep out their timeouts for good
                if (closed) {
                    break;
                }
                failures = Math.min(failures + 1, RetryPolicy.UNLIMITED - 1);
                long backoffMillis = reconnect.delayBefore(failures).toMillis();
                wake();
                log.warn("waymark: LISTEN connection for schema {} failed (attempt {}), retrying in {} ms: {}",
                        schema, failures, backoffMillis, e.toString());
                try {
                    Thread.sleep(backoffMillis);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    break;
                }
            } finally {
                closeListener(connection, pooledTimeout);
            }
        }
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
                PGNotification[] notifications = pg.getNotifications((int) Math.max(1, wait));
                long now = System.nanoTime();
                boolean wake = false;
                if (notifications != null) {
                    for (PGNotification n : notifications) {
                        wake |= received(n.getParameter());
                    }
                }
                boolean tick = now - lastTick >= tickNanos;
                if (tick) {
                    lastTick = now;
                }
                if (wake) {
                    wake();
                } else if (tick) {
                    signal(); // the head watch keeps its own timer
                }
                // The heartbeat notices a dead backend even when nobody notifies. While the head watch is
                // in use, its probe is the heartbeat, due an interval after the last probe (on whatever
                // connection), so that an idle handle sends one statement per interval, not two.
                boolean probing = watch.active();
                if (probing ? now - watch.heartbeatDue(heartbeatNanos) >= 0 : now - lastHeartbeat >= heartbeatNanos) {
                    if (!probing || !watch.probeOn(connection)) {
                        counts.count(QueryPurpose.NOTIFY);
                        heartbeat.execute("SELECT 1");
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

    /** Keeps the application's name on the LISTEN connection and adds Waymark's role to it. */
    private static void nameListener(Connection connection) throws SQLException {
        String current;
        try (Statement statement = connection.createStatement();
                java.sql.ResultSet rs = statement.executeQuery("SHOW application_name")) {
            current = rs.next() ? rs.getString(1) : null;
        }
        try (java.sql.PreparedStatement set = connection.prepareStatement(
                "SELECT set_config('application_name', ?, false)")) {
            set.setString(1, listenerApplicationName(current));
            set.execute();
        }
    }

    /**
     * The LISTEN connection's application_name for a connection named {@code application}: the role
     * alone when the application set no name, else {@code <application>/waymark-listener}, the
     * application's part shortened so that the role survives Postgres's 63-byte limit.
     */
    public static String listenerApplicationName(String application) {
        String suffix = "/" + LISTENER_APPLICATION_NAME;
        if (application == null || application.isBlank() || application.equals(DRIVER_DEFAULT_APPLICATION_NAME)
                || application.equals(LISTENER_APPLICATION_NAME)) {
            return LISTENER_APPLICATION_NAME;
        }
        if (application.endsWith(suffix)) {
            return application; // a pooled connection named before (RESET failed on a broken close)
        }
        StringBuilder app = new StringBuilder();
        int bytes = 0;
        int room = MAX_APPLICATION_NAME_BYTES - suffix.length();
        for (int i = 0; i < application.length();) {
            int cp = application.codePointAt(i);
            int n = new String(Character.toChars(cp)).getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
            if (bytes + n > room) {
                break;
            }
            app.appendCodePoint(cp);
            bytes += n;
            i += Character.charCount(cp);
        }
        return app + suffix;
    }

    private void closeListener(Connection connection, int pooledTimeout) {
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
                thread.join(LISTEN_WAIT.toMillis() + networkTimeout().toMillis()); // a heartbeat may be stuck that long
                if (thread.isAlive()) {
                    log.warn("waymark: LISTEN thread for schema {} did not stop in time", schema);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
