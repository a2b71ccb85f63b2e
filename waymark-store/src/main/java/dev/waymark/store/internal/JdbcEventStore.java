package dev.waymark.store.internal;

import dev.waymark.store.AppendResult;
import dev.waymark.store.BroadcastRegistration;
import dev.waymark.store.EventData;
import dev.waymark.store.EventStore;
import dev.waymark.store.ExpectedVersion;
import dev.waymark.store.GlobalPosition;
import dev.waymark.store.HeadWatch;
import dev.waymark.store.Horizon;
import dev.waymark.store.InvalidInputException;
import dev.waymark.store.Migrations;
import dev.waymark.store.Partition;
import dev.waymark.store.QueryPurpose;
import dev.waymark.store.RecordedEvent;
import dev.waymark.store.StreamAppend;
import dev.waymark.store.StreamInfo;
import dev.waymark.store.StreamNames;
import dev.waymark.store.TransactionWork;
import dev.waymark.store.WakeSignal;
import dev.waymark.store.plumbing.Jdbc;
import dev.waymark.store.plumbing.SqlErrors;
import dev.waymark.store.plumbing.TransactionBounds;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.stream.Stream;
import javax.sql.DataSource;

/** The PostgreSQL event store: a facade over one class per use case. */
public final class JdbcEventStore implements EventStore {

    private final DataSource dataSource;
    private final String schema;
    private final Notifier notifier;
    private final Appender appender;
    private final EventReader reader;
    private final StreamLifecycle lifecycle;
    private final Transactions transactions;
    private final TransactionBounds transactionBounds;
    private final QueryCounts counts = new QueryCounts();
    private final SharedHeadWatch headWatch;
    /** How much longer than the transaction bound a read on a lent LISTEN connection may block. */
    private static final Duration READ_MARGIN = Duration.ofSeconds(5);

    /** Created by {@link dev.waymark.store.EventStoreBuilder}, which validated the arguments. */
    public JdbcEventStore(DataSource dataSource, String schema, Clock clock, NotifierSettings settings,
            TransactionBounds transactionBounds, GroupCommitSettings groupCommit) {
        this.transactionBounds = transactionBounds;
        this.dataSource = dataSource;
        this.schema = schema;
        this.headWatch = new SharedHeadWatch(dataSource, schema, settings.fallbackPoll(), counts);
        this.notifier = new Notifier(dataSource, schema, settings, counts, headWatch);
        this.appender = new Appender(dataSource, schema, clock, notifier::appended, transactionBounds, groupCommit);
        this.reader = new EventReader(dataSource, schema);
        this.lifecycle = new StreamLifecycle(dataSource, schema);
        this.transactions = new Transactions(dataSource, schema, appender, notifier::appended);
    }

    /** The statements this handle and the modules built on it ran, by purpose. */
    public QueryCounts queryCounts() {
        return counts;
    }

    /** The bounds of the transactions Waymark opens for its own work on this store. */
    public TransactionBounds transactionBounds() {
        return transactionBounds;
    }

    @Override
    public String schema() {
        return schema;
    }

    /** See {@link dev.waymark.store.plumbing.StoreInternals}. */
    public DataSource dataSource() {
        return dataSource;
    }

    @Override
    public Horizon horizon() {
        counts.count(QueryPurpose.HORIZON);
        return reader.horizon();
    }

    @Override
    public Migrations migrations() {
        return new Migrations(dataSource, schema);
    }

    @Override
    public AppendResult append(String stream, ExpectedVersion expected, List<EventData> events) {
        counts.count(QueryPurpose.APPEND);
        return appender.appendCommitted(List.of(new StreamAppend(stream, expected, events)), false).get(0);
    }

    @Override
    public List<AppendResult> appendMultiStream(List<StreamAppend> appends) {
        counts.count(QueryPurpose.APPEND);
        return appender.appendCommitted(appends, false);
    }

    @Override
    public AppendResult append(Connection connection, String stream, ExpectedVersion expected, List<EventData> events) {
        counts.count(QueryPurpose.APPEND);
        return appender.appendOn(requireConnection(connection), List.of(new StreamAppend(stream, expected, events)),
                false).get(0);
    }

    @Override
    public List<AppendResult> appendMultiStream(Connection connection, List<StreamAppend> appends) {
        counts.count(QueryPurpose.APPEND);
        return appender.appendOn(requireConnection(connection), appends, false);
    }

    @Override
    public void lockStreams(Connection connection, List<String> streams) {
        requireConnection(connection);
        if (streams == null || streams.isEmpty()) {
            throw new InvalidInputException("lockStreams needs at least one stream name");
        }
        streams.forEach(StreamNames::requireValid);
        try {
            if (connection.getAutoCommit()) {
                throw new InvalidInputException("lockStreams needs an open transaction, but the connection is in"
                        + " autocommit mode, where each lock would end with its own statement: call"
                        + " connection.setAutoCommit(false) first");
            }
        } catch (SQLException e) {
            throw SqlErrors.translate(e, "lock streams", schema);
        }
        appender.lockStreams(connection, streams);
    }

    @Override
    public <T, E extends Exception> T inTransaction(TransactionWork<T, E> work) throws E {
        counts.count(QueryPurpose.APPEND);
        return transactions.run(work);
    }

    /**
     * Runs {@code work} on the handle's LISTEN connection while it is up and free, else on a pooled
     * connection; see {@link dev.waymark.store.plumbing.Jdbc#inTransactionOffPool}.
     */
    public <T> T onListenConnection(Jdbc.Work<T> work) throws SQLException {
        // the server's bounds of the work run out before the connection's reads give up
        return notifier.onListenConnection(work, transactionBounds.timeout().plus(READ_MARGIN));
    }

    /** See {@link dev.waymark.store.plumbing.StoreInternals}. */
    public void signalAppended() {
        notifier.appended();
    }

    @Override
    public List<RecordedEvent> readStreamForward(String stream, long afterVersion, int limit) {
        return read().stream(stream, true, afterVersion, limit);
    }

    @Override
    public List<RecordedEvent> readStreamBackward(String stream, long beforeVersion, int limit) {
        return read().stream(stream, false, beforeVersion, limit);
    }

    @Override
    public List<RecordedEvent> readAllForward(GlobalPosition after, int limit) {
        return read().all(true, after, limit, Partition.WHOLE);
    }

    @Override
    public List<RecordedEvent> readAllBackward(GlobalPosition before, int limit) {
        return read().all(false, before, limit, Partition.WHOLE);
    }

    @Override
    public List<RecordedEvent> readCategoryForward(String category, GlobalPosition after, int limit) {
        return read().category(category, true, after, limit, Partition.WHOLE);
    }

    @Override
    public List<RecordedEvent> readCategoryBackward(String category, GlobalPosition before, int limit) {
        return read().category(category, false, before, limit, Partition.WHOLE);
    }

    @Override
    public List<RecordedEvent> readAllForward(GlobalPosition after, int limit, Partition partition) {
        return read().all(true, after, limit, partition);
    }

    @Override
    public List<RecordedEvent> readCategoryForward(String category, GlobalPosition after, int limit,
            Partition partition) {
        return read().category(category, true, after, limit, partition);
    }

    @Override
    public Stream<RecordedEvent> streamForward(String stream, int pageSize) {
        requirePageSize(pageSize);
        return Pages.lazily(0L, v -> read().stream(stream, true, v, pageSize), RecordedEvent::streamVersion, pageSize);
    }

    @Override
    public Stream<RecordedEvent> streamBackward(String stream, int pageSize) {
        requirePageSize(pageSize);
        return Pages.lazily(Long.MAX_VALUE, v -> read().stream(stream, false, v, pageSize),
                RecordedEvent::streamVersion, pageSize);
    }

    @Override
    public Stream<RecordedEvent> allForward(GlobalPosition after, int pageSize) {
        requirePageSize(pageSize);
        return Pages.lazily(after, p -> read().all(true, p, pageSize, Partition.WHOLE), RecordedEvent::position,
                pageSize);
    }

    @Override
    public Stream<RecordedEvent> allBackward(GlobalPosition before, int pageSize) {
        requirePageSize(pageSize);
        return Pages.lazily(before, p -> read().all(false, p, pageSize, Partition.WHOLE), RecordedEvent::position,
                pageSize);
    }

    @Override
    public Stream<RecordedEvent> categoryForward(String category, GlobalPosition after, int pageSize) {
        requirePageSize(pageSize);
        return Pages.lazily(after, p -> read().category(category, true, p, pageSize, Partition.WHOLE),
                RecordedEvent::position,
                pageSize);
    }

    /** The reader, with one read counted: every call through here reads one page. */
    private EventReader read() {
        counts.count(QueryPurpose.READ);
        return reader;
    }

    @Override
    public GlobalPosition headPosition() {
        counts.count(QueryPurpose.HORIZON);
        return reader.head();
    }

    @Override
    public List<StreamInfo> listStreams(String category, String afterName, int limit) {
        return lifecycle.list(category, afterName, limit);
    }

    @Override
    public Optional<StreamInfo> streamInfo(String stream) {
        return lifecycle.info(stream);
    }

    @Override
    public boolean softDelete(String stream) {
        return lifecycle.setDeleted(stream, true);
    }

    @Override
    public boolean undelete(String stream) {
        return lifecycle.setDeleted(stream, false);
    }

    @Override
    public HeadWatch headWatch() {
        notifier.startListener(); // the watch probes on the wakes that the LISTEN thread hears
        return headWatch;
    }

    @Override
    public long queryCount(QueryPurpose purpose) {
        if (purpose == null) {
            throw new InvalidInputException("query purpose must not be null");
        }
        return counts.get(purpose);
    }

    @Override
    public WakeSignal wakeSignal() {
        notifier.startListener();
        return notifier;
    }

    /** See {@link dev.waymark.store.plumbing.StoreInternals}. */
    public void broadcast(String topic, String message) {
        notifier.broadcast(BroadcastInput.topic(topic), BroadcastInput.message(message));
    }

    /** See {@link dev.waymark.store.plumbing.StoreInternals}. */
    public BroadcastRegistration onBroadcast(String topic, Consumer<String> listener) {
        String valid = BroadcastInput.topic(topic);
        if (listener == null) {
            throw new InvalidInputException("broadcast listener must not be null");
        }
        Runnable remove = notifier.onBroadcast(valid, listener);
        return remove::run;
    }

    @Override
    public void close() {
        headWatch.close();
        notifier.close();
    }

    private static Connection requireConnection(Connection connection) {
        if (connection == null) {
            throw new InvalidInputException("connection must not be null");
        }
        return connection;
    }

    private static void requirePageSize(int pageSize) {
        if (pageSize < 1) {
            throw new InvalidInputException("page size must be >= 1, got " + pageSize);
        }
    }
}
