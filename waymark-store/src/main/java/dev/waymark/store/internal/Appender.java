package dev.waymark.store.internal;

import dev.waymark.core.RetryPolicy;
import dev.waymark.core.WaymarkException;
import dev.waymark.store.AppendRefusedException;
import dev.waymark.store.AppendResult;
import dev.waymark.store.DuplicateEventException;
import dev.waymark.store.ExpectedVersion;
import dev.waymark.store.GlobalPosition;
import dev.waymark.store.StoreException;
import dev.waymark.store.StreamAlreadyExistsException;
import dev.waymark.store.StreamAppend;
import dev.waymark.store.StreamNotFoundException;
import dev.waymark.store.WrongExpectedVersionException;
import dev.waymark.store.plumbing.Schema;
import dev.waymark.store.plumbing.SqlErrors;
import dev.waymark.store.plumbing.TransactionBounds;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Appends: one call of the {@code append_events} function per append, single or multi-stream; with
 * group commit on, concurrent appends that commit on their own go through the {@link AppendBatcher}.
 */
final class Appender {

    private static final Logger log = LoggerFactory.getLogger(Appender.class);

    private static final String LOCK_SQL = "SELECT %s.lock_streams(?::text[])";

    private static final String APPEND_SQL = """
            SELECT %s.append_events(?::text[], ?::bigint[], ?::integer[], ?::uuid[], ?::text[],
                                    ?::text[]::jsonb[], ?::text[]::jsonb[], ?::uuid[], ?::uuid[], ?::timestamptz)
            """;

    /**
     * A store-managed append's retry of a transient failure (SQLSTATE class 40) before it reaches the
     * caller: 5 attempts in all, 10 ms doubling up to 50 ms between them, of which a random half to
     * all is taken, so that appenders that failed together (both sides of a deadlock, say) do not
     * collide again in step.
     */
    static final RetryPolicy RETRY = RetryPolicy.exponential(5, Duration.ofMillis(10), Duration.ofMillis(50))
            .withJitter(0.5);

    private final DataSource dataSource;
    private final String schema;
    private final String sql;
    private final String lockSql;
    private final Clock clock;
    private final Runnable afterCommit;
    private final ResendCheck resendCheck;
    private final TransactionBounds bounds;
    /** Null when group commit is off. */
    private final AppendBatcher batcher;

    Appender(DataSource dataSource, String schema, Clock clock, Runnable afterCommit, TransactionBounds bounds,
            GroupCommitSettings groupCommit) {
        this.dataSource = dataSource;
        this.schema = schema;
        this.sql = APPEND_SQL.formatted(Schema.quote(schema));
        this.lockSql = LOCK_SQL.formatted(Schema.quote(schema));
        this.clock = clock;
        this.afterCommit = afterCommit;
        this.resendCheck = new ResendCheck(schema);
        this.bounds = bounds;
        this.batcher = groupCommit.enabled()
                ? new AppendBatcher(dataSource, schema, bounds, afterCommit, groupCommit, this::appendAlone)
                : null;
    }

    /**
     * Appends in a transaction of the store's own. A transient failure (SQLSTATE class 40: a
     * serialization failure, a deadlock) rolled the whole append back, so it is tried again with the
     * same event ids, as {@link #RETRY} says.
     */
    List<AppendResult> appendCommitted(List<StreamAppend> appends, boolean allowReserved) {
        List<StreamAppend> prepared = AppendValidator.prepare(appends, allowReserved, clock);
        boolean checkResend = ResendCheck.idsChosenByCaller(appends);
        OffsetDateTime now = OffsetDateTime.now(clock).withOffsetSameInstant(ZoneOffset.UTC);
        if (batcher != null) {
            List<AppendResult> batched = batcher.append(prepared, checkResend, now);
            if (batched != null) {
                return batched;
            }
        }
        return appendAlone(prepared, checkResend, now);
    }

    /** {@link #appendCommitted} of validated appends in a transaction of their own, with the retries. */
    private List<AppendResult> appendAlone(List<StreamAppend> prepared, boolean checkResend, OffsetDateTime now) {
        for (int attempt = 1;; attempt++) {
            try (Connection connection = dataSource.getConnection()) {
                List<AppendResult> results;
                try {
                    results = inOwnTransaction(connection, prepared, now);
                } catch (SQLException e) {
                    if (!isConflict(e)) {
                        throw e;
                    }
                    // rolled back, so the connection can still look for the events
                    throw translate(e, prepared, checkResend ? connection : null);
                }
                afterCommit.run();
                return results;
            } catch (SQLException e) {
                if (!SqlErrors.isTransient(e) || !RETRY.allowsAnotherAttempt(attempt)) {
                    throw translate(e, prepared, null);
                }
                Duration pause = RETRY.delayBefore(attempt, ThreadLocalRandom.current());
                log.debug("append to {} hit {} (attempt {} of {}); retrying in {} ms with the same event ids",
                        describe(prepared), e.getSQLState(), attempt, RETRY.maxAttempts(), pause.toMillis());
                try {
                    Thread.sleep(pause);
                } catch (InterruptedException interrupt) {
                    // nothing was written: give up at once, and leave the interrupt for the caller
                    Thread.currentThread().interrupt();
                    WaymarkException failure = translate(e, prepared, null);
                    failure.addSuppressed(interrupt);
                    throw failure;
                }
            }
        }
    }

    /** Appends on the caller's connection, in the caller's transaction; the caller commits. */
    List<AppendResult> appendOn(Connection connection, List<StreamAppend> appends, boolean allowReserved) {
        return appendPrepared(connection, prepare(appends, allowReserved), ResendCheck.idsChosenByCaller(appends),
                () -> CALLERS_CONNECTION_REMEDY);
    }

    /** What {@link #appendOn} says to do about an append refused for a stream lock taken too late. */
    static final String CALLERS_CONNECTION_REMEDY = "append before any such statement, or take the streams' locks"
            + " as the transaction's first statement with EventStore.lockStreams(connection, streams), or use"
            + " EventStore.inTransaction, which runs the work again with those locks taken first";

    /** Validates {@code appends} and assigns their event ids, before any database work. */
    List<StreamAppend> prepare(List<StreamAppend> appends, boolean allowReserved) {
        return AppendValidator.prepare(appends, allowReserved, clock);
    }

    /**
     * Appends validated {@code prepared} appends on the caller's connection, in the caller's
     * transaction. {@code remedy} completes the message of a refusal for a stream lock taken after
     * the transaction got its id (WM001): what the caller can do about it.
     */
    List<AppendResult> appendPrepared(Connection connection, List<StreamAppend> prepared, boolean idsChosenByCaller,
            Supplier<String> remedy) {
        try {
            return execute(connection, prepared, OffsetDateTime.now(clock).withOffsetSameInstant(ZoneOffset.UTC));
        } catch (SQLException e) {
            if (SqlErrors.APPEND_AFTER_WRITE.equals(e.getSQLState())) {
                throw LockRefusal.of(e, prepared, remedy.get());
            }
            // No retry here: the caller's transaction is aborted and only the caller can redo it.
            // For the same reason a conflict can be told from a resend only on an autocommit
            // connection, where the failed statement ended its own transaction.
            throw translate(e, prepared, idsChosenByCaller && autoCommit(connection) ? connection : null);
        }
    }

    /**
     * Takes the append locks of {@code streams} for the rest of the caller's transaction on
     * {@code connection}, which must not have its transaction id yet; appends to them later in the
     * transaction are then accepted after any other statement.
     */
    void lockStreams(Connection connection, Collection<String> streams) {
        try (PreparedStatement statement = connection.prepareStatement(lockSql)) {
            statement.setArray(1, connection.createArrayOf("text", streams.toArray(String[]::new)));
            statement.execute();
        } catch (SQLException e) {
            String action = "lock " + LockRefusal.quoted(streams);
            if (SqlErrors.APPEND_AFTER_WRITE.equals(e.getSQLState())) {
                throw new AppendRefusedException(action + " refused: " + SqlErrors.serverMessage(e)
                        + ". A lock taken after the transaction has its id would not keep the stream's events in"
                        + " the global order; take the locks as the first statement of the transaction",
                        e.getSQLState(), e);
            }
            throw SqlErrors.translate(e, action, schema);
        }
    }

    /** Runs the append in a transaction of the store's own on {@code connection}, and commits it. */
    private List<AppendResult> inOwnTransaction(Connection connection, List<StreamAppend> prepared,
            OffsetDateTime now) throws SQLException {
        return OwnTransaction.run(connection, bounds, c -> execute(c, prepared, now));
    }

    private static boolean autoCommit(Connection connection) {
        try {
            return connection.getAutoCommit();
        } catch (SQLException e) {
            return false;
        }
    }

    private static boolean isConflict(SQLException e) {
        String state = e.getSQLState();
        return SqlErrors.WRONG_VERSION.equals(state) || SqlErrors.STREAM_NOT_FOUND.equals(state)
                || SqlErrors.STREAM_EXISTS.equals(state);
    }

    private List<AppendResult> execute(Connection connection, List<StreamAppend> appends, OffsetDateTime now)
            throws SQLException {
        String[] streams = new String[appends.size()];
        Long[] expected = new Long[appends.size()];
        Integer[] counts = new Integer[appends.size()];
        for (int s = 0; s < appends.size(); s++) {
            StreamAppend append = appends.get(s);
            streams[s] = append.streamName();
            expected[s] = encode(append.expected());
            counts[s] = append.events().size();
        }
        EventColumns events = EventColumns.of(appends);
        long[] out;
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            statement.setArray(1, connection.createArrayOf("text", streams));
            statement.setArray(2, connection.createArrayOf("int8", expected));
            statement.setArray(3, connection.createArrayOf("int4", counts));
            events.bind(statement, connection, 4);
            statement.setObject(10, now);
            out = EventColumns.result(statement);
        }
        if (out.length != 1 + 4 * appends.size()) {
            throw new IllegalStateException("append_events returned " + out.length + " values for "
                    + appends.size() + " streams");
        }
        long tx = out[0];
        List<UUID> allIds = events.ids();
        List<AppendResult> results = new ArrayList<>(appends.size());
        int offset = 0;
        for (int s = 0; s < appends.size(); s++) {
            StreamAppend append = appends.get(s);
            int n = append.events().size();
            int at = 1 + 4 * s;
            results.add(new AppendResult(append.streamName(), out[at + 1], new GlobalPosition(tx, out[at + 2]),
                    new GlobalPosition(tx, out[at + 3]), allIds.subList(offset, offset + n)));
            offset += n;
        }
        return results;
    }

    /** The expected version as the append functions take it: -1 any, -2 no stream, -3 exists, n exactly n. */
    static long encode(ExpectedVersion expected) {
        return switch (expected) {
            case ExpectedVersion.Any any -> -1;
            case ExpectedVersion.NoStream none -> -2;
            case ExpectedVersion.StreamExists exists -> -3;
            case ExpectedVersion.Exactly exactly -> exactly.version();
        };
    }

    /**
     * Classifies {@code e}. A conflict becomes a {@link DuplicateEventException} when
     * {@code lookup} (a connection the failed append left usable, or null for none) finds every
     * event of the append already stored in its stream: the append is a resend of one that committed.
     */
    private WaymarkException translate(SQLException e, List<StreamAppend> appends, Connection lookup) {
        if (!isConflict(e)) {
            return SqlErrors.translate(e, "append to " + describe(appends), schema);
        }
        String state = e.getSQLState();
        ConflictDetail detail = ConflictDetail.parse(SqlErrors.serverDetail(e));
        StreamAppend append = appends.get(Math.min(detail.index(), appends.size() - 1));
        StoreException conflict = conflict(state, append, detail.actual(), detail.deleted(), e);
        if (lookup == null) {
            return conflict;
        }
        try {
            if (resendCheck.alreadyStored(lookup, appends)) {
                UUID first = appends.get(0).events().get(0).eventId();
                return new DuplicateEventException("append to " + describe(appends) + " failed: all of its events"
                        + " (the first with id " + first + ") are already stored in their streams, so an earlier"
                        + " attempt of this append committed (" + conflict.getMessage() + ")", first, state, conflict);
            }
        } catch (SQLException check) {
            conflict.addSuppressed(check);
        }
        return conflict;
    }

    /**
     * The exception of a failed condition of {@code append}: {@code state} is the conflict's SQLSTATE
     * (WM010, WM011 or WM012), {@code actual} the stream's version ({@code -1} when it does not exist).
     */
    static StoreException conflict(String state, StreamAppend append, long actual, boolean deleted, Throwable cause) {
        String name = append.streamName();
        return switch (state) {
            case SqlErrors.WRONG_VERSION -> new WrongExpectedVersionException(name,
                    ((ExpectedVersion.Exactly) append.expected()).version(), actual, deleted, state, cause);
            case SqlErrors.STREAM_NOT_FOUND -> new StreamNotFoundException(name, deleted, state, cause);
            default -> new StreamAlreadyExistsException(name, actual, deleted, state, cause);
        };
    }

    static String describe(List<StreamAppend> appends) {
        if (appends.size() == 1) {
            return "stream '" + appends.get(0).streamName() + "'";
        }
        return "streams " + appends.stream().map(a -> "'" + a.streamName() + "'").toList();
    }

    /** The DETAIL of a conflict raised by {@code append_events}. */
    private record ConflictDetail(int index, long actual, boolean deleted) {
        static ConflictDetail parse(String json) {
            if (json == null) {
                return new ConflictDetail(0, -1, false);
            }
            var node = Json.readObject(json, "conflict detail");
            return new ConflictDetail(node.path("index").asInt(0), node.path("actual").asLong(-1),
                    node.path("deleted").asBoolean(false));
        }
    }
}
