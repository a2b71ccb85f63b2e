package dev.waymark.store;

import java.sql.Connection;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import javax.sql.DataSource;

/**
 * A handle on a Waymark event store in one PostgreSQL schema. Thread-safe; create one per schema
 * and process, and {@link #close()} it on shutdown (the caller's {@link DataSource} stays open).
 *
 * <h2>Guarantees</h2>
 * <ul>
 *   <li><b>Atomic appends.</b> An append (single or multi-stream) writes all its events or none.
 *   <li><b>Per-stream order.</b> Versions of a stream are 1, 2, 3, ... without gaps; concurrent
 *       appenders to one stream are serialized and checked against their {@link ExpectedVersion}.
 *   <li><b>Global order without skips.</b> Every event has a {@link GlobalPosition}; all-stream and
 *       category reads return events in that order and only once every earlier transaction has
 *       ended, so a reader that has passed a position never later finds an event before it, even
 *       when appends commit out of order. Per-stream order agrees with the global order.
 *   <li><b>No global lock.</b> Appends to different streams do not wait for each other.
 * </ul>
 *
 * <p>Waymark never runs DDL implicitly: apply the schema with {@link #migrations()} first.
 */
public interface EventStore extends AutoCloseable {

    /** A builder for a store on {@code dataSource}, whose connections must use autocommit (HikariCP's default). */
    static EventStoreBuilder builder(DataSource dataSource) {
        return new EventStoreBuilder(dataSource);
    }

    /** The schema this handle works in. */
    String schema();

    /**
     * How far the visibility horizon lags: committed events that all-stream and category readers
     * cannot see yet because an older writing transaction is still open, and that transaction's age.
     */
    Horizon horizon();

    /** Schema migrations of this store's schema: apply, print the SQL, inspect. */
    Migrations migrations();

    /** Applies pending migrations; shorthand for {@code migrations().migrate()}. */
    default void migrate() {
        migrations().migrate();
    }

    // ---- appends -------------------------------------------------------------------------------

    /**
     * Appends events to one stream in a transaction of the store's: its own, or, with group commit
     * (the default, see {@link EventStoreBuilder#groupCommit(boolean)}), one shared with appends of
     * other threads of this handle made at the same moment; either way the append is atomic, its
     * outcome its own, and the call returns once its events committed. A transient failure (SQLSTATE
     * class 40: a serialization failure, a deadlock) is retried with the same event ids, up to 5
     * attempts in all, after a backoff of 10 ms doubling up to 50 ms, of which a random half to all
     * is taken; an interrupt during a backoff ends the retries (the interrupt flag stays set).
     * Then {@link TransientStoreException}.
     *
     * <p>Resending an append that committed, with the same event ids (after an unknown outcome,
     * say), raises {@link DuplicateEventException} whatever {@code expected} is: when the expected
     * version no longer holds and every event of the batch is already stored in {@code stream}, the
     * store reports the duplicate, not the conflict. Only then: a batch of which only some events are
     * stored, or stored in another stream, or with an id the store generated, is a conflict.
     *
     * @throws InvalidInputException for an invalid name, an empty batch, JSON that does not parse
     * @throws AppendConflictException when {@code expected} does not hold (and the append is not a resend)
     * @throws DuplicateEventException when an event id is already stored, or the append is a resend
     *     of one that committed
     */
    AppendResult append(String stream, ExpectedVersion expected, List<EventData> events);

    /**
     * Appends one event; see {@link #append(String, ExpectedVersion, List)}.
     *
     * @throws InvalidInputException also when {@code event} is null
     */
    default AppendResult append(String stream, ExpectedVersion expected, EventData event) {
        // a list that holds a null, so the append names it ("event 0 ... is null") instead of List.of's NPE
        return append(stream, expected, Collections.singletonList(event));
    }

    /**
     * Appends to several streams atomically: either every stream's condition holds and all events
     * are written, or nothing is. Results come in input order. Transient failures are retried as
     * for {@link #append(String, ExpectedVersion, List)}. A resend of a multi-stream append
     * that committed is a {@link DuplicateEventException} when every event of every stream is
     * already stored in its stream (see {@link #append(String, ExpectedVersion, List)}).
     *
     * @throws InvalidInputException for invalid input, including a stream named twice
     * @throws AppendConflictException for the first stream, in input order, whose condition fails
     * @throws DuplicateEventException when an event id is already stored, or the append is a resend
     *     of one that committed
     */
    List<AppendResult> appendMultiStream(List<StreamAppend> appends);

    /**
     * Appends on the caller's connection, inside the caller's transaction, so application writes
     * commit or roll back with the events. The transaction must run at READ COMMITTED, and must
     * not have its transaction id yet when it appends to a stream it has not locked: its first
     * write, {@code SELECT ... FOR UPDATE}, a temporary table and {@code nextval()} (when the
     * sequence logs ahead, about one call in 32) give it one. Otherwise the append is refused with
     * an {@link AppendRefusedException} naming the cause and the remedy. Append first, then do the
     * other statements; or take the streams' locks first with {@link #lockStreams(Connection, List)},
     * after which appends to them are accepted anywhere in the transaction; or use
     * {@link #inTransaction(TransactionWork)}, which does that by itself. Several appends in one
     * transaction are fine: a stream the transaction appended to (or locked) while it had no id
     * stays locked for it. Keep the rest of the transaction short: it holds the streams' locks until
     * commit. Readers learn of the commit through their fallback poll
     * ({@link EventStoreBuilder#fallbackPoll}), not at once: {@link #inTransaction(TransactionWork)}
     * wakes them as soon as it commits.
     *
     * <p>A resend of an append that committed is told from a conflict (see
     * {@link #append(String, ExpectedVersion, List)}) only on an autocommit connection: inside an
     * open transaction the failed append has aborted it, so the store cannot look, and the
     * conflict is reported as such. Never retried by the store, since only the caller can redo its
     * transaction: a transient failure is a {@link TransientStoreException}.
     */
    AppendResult append(Connection connection, String stream, ExpectedVersion expected, List<EventData> events);

    /**
     * Takes the append locks of {@code streams} for the rest of the caller's open transaction on
     * {@code connection}, so that appends to them later in that transaction are accepted after any
     * other statement (a write, {@code SELECT ... FOR UPDATE}, a temporary table, {@code nextval()}).
     * Call it as the transaction's first statement: it is refused ({@link AppendRefusedException})
     * once the transaction has its transaction id. The locks are those appends to the streams take:
     * until commit or rollback, every other appender of these streams waits, so keep the
     * transaction short. Several streams are locked in a fixed order, so two transactions locking
     * overlapping sets cannot deadlock on these locks. {@link #inTransaction(TransactionWork)} does
     * this on its own when it needs to.
     *
     * @throws InvalidInputException for an invalid or reserved name, an empty list, or a connection
     *     in autocommit mode (the locks would end with the statement)
     * @throws AppendRefusedException when the transaction already has its transaction id
     */
    void lockStreams(Connection connection, List<String> streams);

    /** The multi-stream form of {@link #append(Connection, String, ExpectedVersion, List)}. */
    List<AppendResult> appendMultiStream(Connection connection, List<StreamAppend> appends);

    /**
     * Runs {@code work} in a READ COMMITTED transaction of the store's, commits it, and wakes
     * readers. Exceptions from {@code work} roll the transaction back and reach the caller
     * unchanged: the application's own {@code SQLException} on {@link StoreTransaction#connection()}
     * too, untranslated, and a store exception from an append inside it as the append threw it.
     * Only a failure of the store's own steps around the work (getting a connection, beginning,
     * taking stream locks, committing) is translated into a store exception, after the rollback: a
     * transient one (SQLSTATE class 40, such as a serialization failure at commit) into
     * {@link TransientStoreException}. A failed transaction is never retried.
     *
     * <p><b>The work may run more than once.</b> The work may append anywhere in the transaction,
     * any number of times, also after its own writes, {@code SELECT ... FOR UPDATE}, temporary
     * tables or {@code nextval()}. Each of those gives the transaction its transaction id, and an
     * append to a stream whose lock the transaction did not hold before it got its id is refused,
     * since its events could otherwise come before earlier events of the stream in the global
     * order. When that happens the store rolls the transaction back and runs the work again with
     * the locks of every stream the refused run appended to taken as the transaction's first
     * statement; then those appends are accepted. A work whose first append to some stream comes
     * after the transaction got its id therefore always runs at least twice, and once more for each
     * further stream it first reaches after a refusal; at most {@value #MAX_TRANSACTION_RUNS} runs
     * in all. (A {@code nextval()} gives the transaction its id only when the sequence logs ahead,
     * about one call in 32, so a work that calls it before appending runs twice that often.) Each
     * run sees a fresh transaction: what a refused run wrote is rolled back, and its result is
     * discarded. Side effects of the work outside the transaction (a message sent, a counter
     * incremented) happen once per run: keep them out of the work, or make them safe to repeat.
     * Appending first, or to all streams in one {@link StoreTransaction#appendMultiStream} call
     * before other statements, needs a single run. The refusal is final, an
     * {@link AppendRefusedException} naming the cause and the remedy, when a run appended to other
     * streams than the run before (stream names that change from run to run, such as names taken
     * from a generated key) or when the runs are used up. Streams locked first stay locked until the
     * transaction ends: other appenders to them wait that long.
     *
     * <p>A work that catches a failed statement (its own or an append's) and returns normally
     * leaves a transaction that PostgreSQL has aborted: its commit would silently roll back. The
     * store rolls it back and throws {@link TransactionAbortedException}, with the first append
     * failure as the cause when there was one; nothing is committed and no reader is woken. (A
     * refused append the work caught is not such a failure: the work runs again, as above.) Roll
     * back to a savepoint after a failed statement to go on in the same transaction.
     *
     * @throws TransactionAbortedException when the work returned normally from an aborted transaction
     * @throws AppendRefusedException when an append is still refused on a later run (see above)
     */
    <T, E extends Exception> T inTransaction(TransactionWork<T, E> work) throws E;

    // ---- reads ---------------------------------------------------------------------------------

    /**
     * Events of a live stream with version {@code > afterVersion}, oldest first, at most
     * {@code limit}. A missing or soft-deleted stream reads as empty. Pass 0 to start.
     */
    List<RecordedEvent> readStreamForward(String stream, long afterVersion, int limit);

    /** Events of a live stream with version {@code < beforeVersion}, newest first; {@code Long.MAX_VALUE} starts at the end. */
    List<RecordedEvent> readStreamBackward(String stream, long beforeVersion, int limit);

    /** Events of every stream after {@code after} in global order, at most {@code limit}. */
    List<RecordedEvent> readAllForward(GlobalPosition after, int limit);

    /** Events of every stream before {@code before}, newest first; {@link GlobalPosition#END} starts at the end. */
    List<RecordedEvent> readAllBackward(GlobalPosition before, int limit);

    /** Events of the streams of {@code category} after {@code after} in global order. */
    List<RecordedEvent> readCategoryForward(String category, GlobalPosition after, int limit);

    /** Events of the streams of {@code category} before {@code before}, newest first. */
    List<RecordedEvent> readCategoryBackward(String category, GlobalPosition before, int limit);

    /**
     * Events of every stream owned by {@code partition} (a consumer-group member) after
     * {@code after}, in global order. The members of a group read disjoint sets whose union is
     * {@link #readAllForward(GlobalPosition, int)}; each stream goes to exactly one member.
     */
    List<RecordedEvent> readAllForward(GlobalPosition after, int limit, Partition partition);

    /** Events of the category's streams owned by {@code partition}, after {@code after}, in global order. */
    List<RecordedEvent> readCategoryForward(String category, GlobalPosition after, int limit, Partition partition);

    /** A lazy, paged read of a whole stream; each page is fetched when needed. */
    Stream<RecordedEvent> streamForward(String stream, int pageSize);

    /** A lazy, paged read of a stream from the newest event back. */
    Stream<RecordedEvent> streamBackward(String stream, int pageSize);

    /** A lazy, paged read of every stream after {@code after}, in global order. */
    Stream<RecordedEvent> allForward(GlobalPosition after, int pageSize);

    /** A lazy, paged read of every stream before {@code before}, newest first. */
    Stream<RecordedEvent> allBackward(GlobalPosition before, int pageSize);

    /** A lazy, paged read of a category after {@code after}, in global order. */
    Stream<RecordedEvent> categoryForward(String category, GlobalPosition after, int pageSize);

    /** The position of the newest event readers can see, or {@link GlobalPosition#START} when none. */
    GlobalPosition headPosition();

    // ---- lifecycle -----------------------------------------------------------------------------

    /**
     * Streams by name, after {@code afterName} (exclusive; empty text to start), at most
     * {@code limit}; only those of {@code category} when it is not null. Soft-deleted streams included.
     */
    List<StreamInfo> listStreams(String category, String afterName, int limit);

    /** A stream's state, live or soft-deleted; empty when it never existed. */
    Optional<StreamInfo> streamInfo(String stream);

    /**
     * Soft-deletes a live stream: stream reads return nothing and appends are refused (see
     * {@link ExpectedVersion}); its events stay in all-stream and category reads, and the name
     * stays reserved.
     *
     * @return whether the stream was live and is now deleted
     * @throws InvalidInputException if the name is invalid or reserved (starts with
     *     {@value StreamNames#RESERVED_PREFIX}): Waymark's own streams cannot be deleted this way
     */
    boolean softDelete(String stream);

    /**
     * Restores a soft-deleted stream with its full history.
     *
     * @return whether the stream was deleted and is now live
     * @throws InvalidInputException if the name is invalid or reserved (starts with
     *     {@value StreamNames#RESERVED_PREFIX})
     */
    boolean undelete(String stream);

    /** The signal raised when new events may be readable. */
    WakeSignal wakeSignal();

    /**
     * The head of the store as this handle's one shared probe sees it: readers that wait for new
     * events wait on it instead of querying on every tick (see {@link HeadWatch}).
     */
    HeadWatch headWatch();

    /**
     * How many statements (or short transactions) this handle, and the subscriptions and pools
     * built on it, sent to the database for {@code purpose} since it was built: one per page read,
     * append, probe, lease pass, checkpoint write. Micrometer exposes it as
     * {@code waymark.store.queries} ({@link dev.waymark.store.micrometer.StoreMetrics}).
     *
     * @throws InvalidInputException when {@code purpose} is null
     */
    long queryCount(QueryPurpose purpose);

    /**
     * The most runs of the work of one {@link #inTransaction(TransactionWork)} call: the first and
     * up to three more, each after an append refused for a stream whose lock the transaction took
     * too late.
     */
    int MAX_TRANSACTION_RUNS = 4;

    /** Stops the notifier threads. Does not close the {@link DataSource}. */
    @Override
    void close();
}
