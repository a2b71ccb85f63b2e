package dev.waymark.store.internal;

import dev.waymark.store.AppendRefusedException;
import dev.waymark.store.AppendResult;
import dev.waymark.store.EventData;
import dev.waymark.store.EventStore;
import dev.waymark.store.ExpectedVersion;
import dev.waymark.store.StoreException;
import dev.waymark.store.StoreTransaction;
import dev.waymark.store.StreamAppend;
import java.sql.Connection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * One run of the work of {@code inTransaction}: the {@link StoreTransaction} the work sees, and
 * what its appends met.
 *
 * <p>A run whose append is refused because the transaction got its id before it locked the stream
 * (WM001) asks for another run, which takes the locks of every stream the refused run appended to
 * (or tried to) as its first statement. A deterministic work repeats the refused run's path up to
 * the refusal, where the stream is now locked, and may go on to a stream it had not reached; so
 * each further run is granted only when the refused run appended to every stream locked for it,
 * and at most {@link EventStore#MAX_TRANSACTION_RUNS} runs in all. A run refused before it appended
 * to all of them took another path than the run before (its streams depend on something that
 * changed between runs, such as a generated key): no number of runs would help, and its refusal
 * is final.
 */
final class TransactionAttempt implements StoreTransaction {

    private final Connection connection;
    private final Appender appender;
    private final int run;
    /** The streams locked before the work ran: empty on the first run. */
    private final Set<String> lockedFirst;
    /** Every stream named by a (valid) append of this run, refused or not. */
    private final Set<String> streams = new LinkedHashSet<>();
    private boolean wantsAnotherRun;
    private StoreException firstError;

    private TransactionAttempt(Connection connection, Appender appender, int run, Set<String> lockedFirst) {
        this.connection = connection;
        this.appender = appender;
        this.run = run;
        this.lockedFirst = lockedFirst;
    }

    /** The first run, on {@code connection}'s open transaction. */
    static TransactionAttempt first(Connection connection, Appender appender) {
        return new TransactionAttempt(connection, appender, 1, Set.of());
    }

    /** Whether this run must be rolled back and the work run again with more stream locks taken first. */
    boolean wantsAnotherRun() {
        return wantsAnotherRun;
    }

    /** The next run, after the caller rolled this one back; call {@link #lockFirst()} before the work. */
    TransactionAttempt nextRun() {
        Set<String> locks = new LinkedHashSet<>(lockedFirst);
        locks.addAll(streams);
        return new TransactionAttempt(connection, appender, run + 1, Set.copyOf(locks));
    }

    /** The streams this run appended to or tried to. */
    Set<String> streams() {
        return streams;
    }

    /** This run's number, 1 for the first. */
    int run() {
        return run;
    }

    /** Takes this run's stream locks as the transaction's first statement; nothing on the first run. */
    void lockFirst() {
        if (!lockedFirst.isEmpty()) {
            appender.lockStreams(connection, lockedFirst);
        }
    }

    /** The first store failure an append of this run threw (the work may have caught it), or null. */
    StoreException firstError() {
        return firstError;
    }

    @Override
    public Connection connection() {
        return connection;
    }

    @Override
    public AppendResult append(String stream, ExpectedVersion expected, List<EventData> events) {
        return appendMultiStream(List.of(new StreamAppend(stream, expected, events))).get(0);
    }

    @Override
    public List<AppendResult> appendMultiStream(List<StreamAppend> appends) {
        List<StreamAppend> prepared = appender.prepare(appends, false);
        prepared.forEach(a -> streams.add(a.streamName()));
        try {
            return appender.appendPrepared(connection, prepared, ResendCheck.idsChosenByCaller(appends), this::refused);
        } catch (StoreException e) {
            if (firstError == null) {
                firstError = e;
            }
            throw e;
        }
    }

    /** Decides, on a refusal for a stream lock taken too late, whether another run follows; returns the remedy. */
    private String refused() {
        boolean samePath = streams.containsAll(lockedFirst);
        wantsAnotherRun = samePath && run < EventStore.MAX_TRANSACTION_RUNS;
        if (wantsAnotherRun) {
            return "inTransaction rolls the transaction back and runs the work again (run " + (run + 1) + " of at most "
                    + EventStore.MAX_TRANSACTION_RUNS + ") with the locks of "
                    + LockRefusal.quoted(nextRun().lockedFirst) + " taken as its first statement";
        }
        if (!samePath) {
            Set<String> missed = new LinkedHashSet<>(lockedFirst);
            missed.removeAll(streams);
            return "on run " + run + " the work appended to other streams than on the run before: it had not"
                    + " appended to " + LockRefusal.quoted(missed) + ", whose locks were taken first for it. The"
                    + " streams of a work that inTransaction may run again must not change from run to run (a stream"
                    + " named after a generated key or a sequence value does): take the names from before the"
                    + " transaction's first write, or append to such a stream before any statement that gives the"
                    + " transaction an id";
        }
        return "the work reached a stream it had not appended to before on each of its "
                + EventStore.MAX_TRANSACTION_RUNS + " runs (" + LockRefusal.quoted(streams) + " in the last): append"
                + " to its streams in one appendMultiStream call, or before the statement that gives the transaction"
                + " an id, so that a single further run suffices";
    }
}
