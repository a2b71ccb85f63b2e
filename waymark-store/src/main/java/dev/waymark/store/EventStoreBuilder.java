package dev.waymark.store;

import dev.waymark.store.internal.GroupCommitSettings;
import dev.waymark.store.internal.JdbcEventStore;
import dev.waymark.store.internal.NotifierSettings;
import dev.waymark.store.plumbing.Schema;
import dev.waymark.store.plumbing.TransactionBounds;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Configures an {@link EventStore}. Every option has a default (the constants below); an invalid
 * value fails {@link #build()} with a message naming the option, the value and the rule.
 * Building does not connect to the database.
 */
public final class EventStoreBuilder {

    /** Default schema. */
    public static final String DEFAULT_SCHEMA = "waymark";
    /** Default: at most one NOTIFY per 5 ms per handle. Bounds: 1 ms to 1 s. */
    public static final Duration DEFAULT_NOTIFY_WINDOW = Duration.ofMillis(5);
    /** Default fallback tick: 1 s. Bounds: 10 ms to 10 min. */
    public static final Duration DEFAULT_FALLBACK_POLL = Duration.ofSeconds(1);
    /** Default first reconnect delay of the LISTEN connection: 100 ms. Bounds: 10 ms to 1 min. */
    public static final Duration DEFAULT_RECONNECT_INITIAL = Duration.ofMillis(100);
    /** Default cap of the doubling reconnect delay: 30 s. Bounds: the initial delay to 10 min. */
    public static final Duration DEFAULT_RECONNECT_MAX = Duration.ofSeconds(30);
    /**
     * Default bound of the transactions Waymark opens for its own work: 10 s. Bounds: 100 ms to 1 h.
     * See {@link #internalTransactionTimeout(Duration)}.
     */
    public static final Duration DEFAULT_INTERNAL_TRANSACTION_TIMEOUT = Duration.ofSeconds(10);
    /** Default: group commit on. See {@link #groupCommit(boolean)}. */
    public static final boolean DEFAULT_GROUP_COMMIT = true;
    /** Default most appends in one group commit: 64. Bounds: 1 to 1,000. */
    public static final int DEFAULT_MAX_APPEND_BATCH_SIZE = 64;
    /** Default most estimated bytes in one group commit: 1 MiB. Bounds: 1 KiB to 64 MiB. */
    public static final long DEFAULT_MAX_APPEND_BATCH_BYTES = 1L << 20;
    /** Default most group commits in flight at once: 2. Bounds: 1 to 64. */
    public static final int DEFAULT_MAX_CONCURRENT_APPEND_BATCHES = 2;

    private static final Logger log = LoggerFactory.getLogger(EventStoreBuilder.class);

    private final DataSource dataSource;
    private String schema = DEFAULT_SCHEMA;
    private Clock clock = Clock.systemUTC();
    private boolean notifications = true;
    private Duration notifyWindow = DEFAULT_NOTIFY_WINDOW;
    private Duration fallbackPoll = DEFAULT_FALLBACK_POLL;
    private Duration reconnectInitial = DEFAULT_RECONNECT_INITIAL;
    private Duration reconnectMax = DEFAULT_RECONNECT_MAX;
    private Duration internalTransactionTimeout = DEFAULT_INTERNAL_TRANSACTION_TIMEOUT;
    private boolean groupCommit = DEFAULT_GROUP_COMMIT;
    private int maxAppendBatchSize = DEFAULT_MAX_APPEND_BATCH_SIZE;
    private long maxAppendBatchBytes = DEFAULT_MAX_APPEND_BATCH_BYTES;
    private int maxConcurrentAppendBatches = DEFAULT_MAX_CONCURRENT_APPEND_BATCHES;
    private AppendBatchListener appendBatchListener = AppendBatchListener.NONE;

    EventStoreBuilder(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    /** The schema holding the store's tables: a lower-case identifier, default {@value #DEFAULT_SCHEMA}. */
    public EventStoreBuilder schema(String schema) {
        this.schema = schema;
        return this;
    }

    /** The clock for event timestamps and UUIDv7 ids; default the system UTC clock. */
    public EventStoreBuilder clock(Clock clock) {
        this.clock = clock;
        return this;
    }

    /**
     * Whether to LISTEN/NOTIFY across handles (default true). Local wake-ups (after this handle's
     * appends) and the {@link #fallbackPoll(Duration) fallback tick} work either way: without
     * notifications the tick is the only news of other handles' appends.
     */
    public EventStoreBuilder notifications(boolean enabled) {
        this.notifications = enabled;
        return this;
    }

    /** The coalescing window of outgoing NOTIFYs. */
    public EventStoreBuilder notifyWindow(Duration window) {
        this.notifyWindow = window;
        return this;
    }

    /**
     * How often waiters are woken without a notification, bounding the delay after a lost one (or,
     * with notifications off, after any append of another handle).
     */
    public EventStoreBuilder fallbackPoll(Duration interval) {
        this.fallbackPoll = interval;
        return this;
    }

    /** The reconnect backoff of the LISTEN connection: first delay and cap, doubling in between. */
    public EventStoreBuilder reconnectBackoff(Duration initial, Duration max) {
        this.reconnectInitial = initial;
        this.reconnectMax = max;
        return this;
    }

    /**
     * The server-side bound of every transaction Waymark opens for its own work (checkpoints,
     * leases, dead letters, operator calls such as {@code ShardedSubscription.release}): set LOCAL
     * for each such transaction as its {@code idle_in_transaction_session_timeout},
     * {@code lock_timeout} and {@code statement_timeout}. No statement of one runs or waits for a
     * lock longer, and the server ends one (with its session) that sits idle that long between
     * statements, as when its process is frozen (a GC pause, SIGSTOP, a paused VM): a frozen process
     * holds the visibility horizon of every reader, and any lease row, for at most this long after
     * its last statement returned. The failing call gets a retryable store exception naming the
     * bound; nothing of the transaction is committed. Never applied to the application's own
     * transactions ({@link EventStore#inTransaction}, appends on the caller's connection): their
     * length is the application's to bound. Default 10 s; 100 ms to 1 h.
     */
    public EventStoreBuilder internalTransactionTimeout(Duration timeout) {
        this.internalTransactionTimeout = timeout;
        return this;
    }

    /**
     * Group commit (default on): concurrent {@link EventStore#append(String, ExpectedVersion, List)
     * append} and {@link EventStore#appendMultiStream(List) appendMultiStream} calls of this handle
     * that commit on their own share one transaction and one statement, which multiplies the append
     * rate of many concurrent writers. An append that finds no other in flight goes at once, with no
     * timer and no added latency; appends arriving while one is in flight wait for it to end and are
     * then committed together (at most {@link #maxAppendBatchSize(int)} appends and
     * {@link #maxAppendBatchBytes(long)} bytes at a time, up to
     * {@link #maxConcurrentAppendBatches(int)} batches in flight). Every guarantee of an append alone holds:
     * each call returns after its own append committed; a failed condition, an invalid or duplicate
     * event fails that call alone, never its neighbours; two appends to one stream in one batch get
     * consecutive versions in call order, the second's expected version checked against the first;
     * per-stream order, the global order and the no-skip guarantee are unchanged; readers are woken
     * once per batch. Appends on the caller's connection or inside {@link EventStore#inTransaction}
     * are never batched. A caller interrupted while its append waits for a batch (not yet part of
     * one) gets a {@link StoreException} and nothing of its append is written; its interrupt flag
     * stays set. Turn it off to give every append a transaction of its own.
     */
    public EventStoreBuilder groupCommit(boolean enabled) {
        this.groupCommit = enabled;
        return this;
    }

    /** The most appends (calls, single or multi-stream) one group commit takes; default 64, 1 to 1,000. */
    public EventStoreBuilder maxAppendBatchSize(int appends) {
        this.maxAppendBatchSize = appends;
        return this;
    }

    /**
     * The most estimated bytes (event data, metadata, types, stream names) one group commit takes;
     * default 1 MiB, 1 KiB to 64 MiB. A single append larger than this still goes, in a batch of its own.
     */
    public EventStoreBuilder maxAppendBatchBytes(long bytes) {
        this.maxAppendBatchBytes = bytes;
        return this;
    }

    /**
     * The most group commits in flight at once, each on a connection of its own (default 2, 1 to
     * 64). With none in flight, an append goes at once; beside batches in flight, another starts
     * only once it is full ({@link #maxAppendBatchSize(int)}, {@link #maxAppendBatchBytes(long)}),
     * or once it holds 4 events and at least as many appends as the batches in flight hold on
     * average, so that a batch in flight waiting for its round trip and commit does not leave the
     * server idle, while batches still grow with load. Fewer batches in flight make larger ones:
     * on two cores, 2 gave more appends per second than 4 from 8 writers on (fewer transactions,
     * statements and WAL flushes per event). Batches in flight never share a stream: an append to a
     * stream a batch in flight writes waits for that batch.
     */
    public EventStoreBuilder maxConcurrentAppendBatches(int batches) {
        this.maxConcurrentAppendBatches = batches;
        return this;
    }

    /**
     * Hears of every group commit (size, wait, duration): for metrics
     * ({@code StoreMetrics.appendBatches}) or tests. Default: none.
     */
    public EventStoreBuilder appendBatchListener(AppendBatchListener listener) {
        this.appendBatchListener = listener;
        return this;
    }

    /**
     * Validates the options and creates the store (without connecting).
     *
     * @throws StoreConfigException naming the first invalid option
     */
    public EventStore build() {
        if (dataSource == null) {
            throw new StoreConfigException("dataSource must not be null");
        }
        Schema.requireValid(schema);
        if (clock == null) {
            throw new StoreConfigException("clock must not be null");
        }
        requireBetween("notifyWindow", notifyWindow, Duration.ofMillis(1), Duration.ofSeconds(1));
        requireBetween("fallbackPoll", fallbackPoll, Duration.ofMillis(10), Duration.ofMinutes(10));
        requireBetween("reconnectBackoff initial", reconnectInitial, Duration.ofMillis(10), Duration.ofMinutes(1));
        requireBetween("reconnectBackoff max", reconnectMax, reconnectInitial, Duration.ofMinutes(10));
        requireBetween("internalTransactionTimeout", internalTransactionTimeout, Duration.ofMillis(100),
                Duration.ofHours(1));
        if (maxAppendBatchSize < 1 || maxAppendBatchSize > 1_000) {
            throw new StoreConfigException("maxAppendBatchSize must be between 1 and 1000 appends, got "
                    + maxAppendBatchSize);
        }
        if (maxAppendBatchBytes < 1024 || maxAppendBatchBytes > 64L << 20) {
            throw new StoreConfigException("maxAppendBatchBytes must be between 1024 and " + (64L << 20)
                    + " bytes (1 KiB to 64 MiB), got " + maxAppendBatchBytes);
        }
        if (maxConcurrentAppendBatches < 1 || maxConcurrentAppendBatches > 64) {
            throw new StoreConfigException("maxConcurrentAppendBatches must be between 1 and 64, got "
                    + maxConcurrentAppendBatches);
        }
        if (appendBatchListener == null) {
            throw new StoreConfigException("appendBatchListener must not be null (AppendBatchListener.NONE for none)");
        }
        NotifierSettings settings = new NotifierSettings(notifications, notifyWindow, fallbackPoll, reconnectInitial,
                reconnectMax);
        log.info("waymark event store: schema={}, notifications={}, notifyWindow={}ms, fallbackPoll={}ms,"
                + " reconnectBackoff={}..{}ms, internalTransactionTimeout={}ms, groupCommit={},"
                + " maxAppendBatchSize={}, maxAppendBatchBytes={}, maxConcurrentAppendBatches={}, clock={}", schema,
                notifications, notifyWindow.toMillis(), fallbackPoll.toMillis(), reconnectInitial.toMillis(),
                reconnectMax.toMillis(), internalTransactionTimeout.toMillis(), groupCommit, maxAppendBatchSize,
                maxAppendBatchBytes, maxConcurrentAppendBatches, clock);
        return new JdbcEventStore(dataSource, schema, clock, settings,
                new TransactionBounds(internalTransactionTimeout),
                new GroupCommitSettings(groupCommit, maxAppendBatchSize, maxAppendBatchBytes,
                        maxConcurrentAppendBatches,
                        appendBatchListener));
    }

    private static void requireBetween(String option, Duration value, Duration min, Duration max) {
        Objects.requireNonNull(min);
        if (value == null || value.compareTo(min) < 0 || value.compareTo(max) > 0) {
            throw new StoreConfigException(option + " must be between " + min.toMillis() + " ms and " + max.toMillis()
                    + " ms, got " + (value == null ? "null" : value.toMillis() + " ms"));
        }
    }
}
