package dev.waymark.store.internal;

import dev.waymark.store.QueryPurpose;
import dev.waymark.store.WakeSignal;
import dev.waymark.store.plumbing.Jdbc;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The store handle's wake signal (docs/ARCHITECTURE.md, "Wake-ups"). Appends never NOTIFY
 * inside their transaction: after commit they signal local waiters at once and ask for one coalesced NOTIFY,
 * sent from a background thread at most once per window. One LISTEN connection per handle fans
 * notifications out to local waiters ({@link ListenLoop}); it reconnects with capped exponential
 * backoff. A fallback tick wakes waiters every {@code fallbackPoll} so a lost notification only
 * delays them (run by the LISTEN thread, or with notifications disabled by the otherwise idle NOTIFY
 * thread). The same channel carries broadcasts ({@link #broadcast}): a payload that starts with
 * {@link #BROADCAST} names its sender, a topic and a message, and wakes nobody.
 */
public final class Notifier implements WakeSignal, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Notifier.class);
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
    private final ListenConnection lending;
    private final ListenLoop loop;
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
        this.lending = new ListenConnection(schema);
        this.loop = new ListenLoop(dataSource, schema, channel, settings, counts, watch, lending, this::wake,
                this::signal, this::received);
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
            } catch (RejectedExecutionException e) {
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
        return loop.reconnects();
    }

    /**
     * Runs {@code work} on the LISTEN connection while it is up (see {@link ListenConnection}), else
     * on a connection of the pool; the connection's reads may block up to {@code readTimeout}.
     */
    <T> T onListenConnection(Jdbc.Work<T> work, Duration readTimeout) throws SQLException {
        return lending.run(work, readTimeout, dataSource);
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
            } catch (RejectedExecutionException e) {
                // closing
            }
            return;
        }
        listener = Thread.ofPlatform().name("waymark-listen-" + schema).daemon(true).start(loop::run);
    }

    /** Stops the threads, sending a pending notification first. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        loop.stop();
        signal();
        sender.shutdown();
        try {
            if (!sender.awaitTermination(5, TimeUnit.SECONDS)) {
                sender.shutdownNow();
            }
            Thread thread = listener;
            if (thread != null) {
                thread.interrupt();
                // a heartbeat may be stuck that long
                thread.join(ListenLoop.LISTEN_WAIT.toMillis() + loop.networkTimeout().toMillis());
                if (thread.isAlive()) {
                    log.warn("waymark: LISTEN thread for schema {} did not stop in time", schema);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
