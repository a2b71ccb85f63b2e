package dev.waymark.store.internal;

import dev.waymark.core.WaymarkException;
import dev.waymark.store.AppendBatch;
import dev.waymark.store.AppendResult;
import dev.waymark.store.EventData;
import dev.waymark.store.StoreException;
import dev.waymark.store.StreamAppend;
import dev.waymark.store.plumbing.SqlErrors;
import dev.waymark.store.plumbing.TransactionBounds;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.locks.ReentrantLock;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Group commit for appends that commit on their own (issue 31), by leaders and followers, with no
 * thread of its own and no timer. Every append joins a queue; batches are taken from its head:
 * <ul>
 *   <li>with no batch in flight, whatever waits goes at once: a lone caller leads a batch of one and
 *       appends exactly as without group commit, with no added latency;
 *   <li>while batches are in flight, the queue grows, and another batch starts beside them only
 *       once it is full (the size or byte bound), or once it holds {@value #START_EVENTS} events
 *       and at least as many appends as the batches in flight hold on average, up to
 *       {@code maxInFlight} batches; otherwise the next batch starts when one in flight ends;
 *   <li>an append to a stream that a batch in flight writes waits for that batch, so batches in
 *       flight never compete for a stream lock and appends to one stream keep their call order.
 * </ul>
 * A batch is handed to its first caller, which commits it with one {@code append_batch} statement
 * in one transaction; each caller still returns after its own append committed (or failed):
 * nothing is acknowledged early. So batches grow with concurrency only.
 *
 * <p>Each append of a batch gets its own outcome: a failed condition fails that caller alone. An
 * append the batch could not try (a stream lock held elsewhere, an event id already stored), and
 * every append of a batch that failed as a whole without committing, goes back to its caller, who
 * appends alone; a batch whose outcome is unknown (the connection broke) fails every caller, as an
 * append alone would.
 */
final class AppendBatcher {

    private static final Logger log = LoggerFactory.getLogger(AppendBatcher.class);

    /** Bytes counted for an event besides its text: ids, positions, timestamps. */
    private static final int EVENT_OVERHEAD = 64;

    /**
     * Events from which a waiting batch is worth a transaction of its own beside those in flight;
     * fewer wait to grow until one ends. Low, because a batch in flight waits on its round trip and
     * its commit's WAL flush, not only on the server's CPU: a second small batch beside it already
     * shares those waits, while one batch at a time leaves the server idle during them. A batch
     * beside others must also be no smaller than they are on average: with many writers, small
     * batches beside large ones would split the queue into more transactions (each with its own
     * statement and WAL flush, and all competing for the same two cores) instead of letting the
     * batches grow.
     */
    static final int START_EVENTS = 4;

    /** An append on its own, as without group commit: the leader of a batch of one runs it. */
    @FunctionalInterface
    interface Alone {
        List<AppendResult> append(List<StreamAppend> prepared, boolean idsChosenByCaller, OffsetDateTime createdAt);
    }

    /** What a queued caller is told to do. */
    private sealed interface Turn {}

    /** Commit this batch (the caller is its first append). */
    private record Lead(List<Pending> batch) implements Turn {}

    /** The append committed. */
    private record Done(List<AppendResult> results) implements Turn {}

    /** The append failed; nothing of it was written. */
    private record Failed(WaymarkException failure) implements Turn {}

    /** Append alone: the batch wrote nothing of this append. */
    private record GoAlone() implements Turn {}

    private static final GoAlone GO_ALONE = new GoAlone();

    /** One caller's append, waiting or in a batch. */
    private static final class Pending {
        final List<StreamAppend> prepared;
        final List<String> streams;
        final boolean idsChosenByCaller;
        final OffsetDateTime createdAt;
        final int events;
        final long bytes;
        final long enqueuedAt = System.nanoTime();
        final CompletableFuture<Turn> turn = new CompletableFuture<>();

        Pending(List<StreamAppend> prepared, boolean idsChosenByCaller, OffsetDateTime createdAt) {
            this.prepared = prepared;
            this.streams = prepared.stream().map(StreamAppend::streamName).toList();
            this.idsChosenByCaller = idsChosenByCaller;
            this.createdAt = createdAt;
            int n = 0;
            long size = 0;
            for (StreamAppend append : prepared) {
                size += append.streamName().length();
                for (EventData event : append.events()) {
                    n++;
                    size += EVENT_OVERHEAD + event.type().length() + event.data().length()
                            + (event.metadata() == null ? 0 : event.metadata().length());
                }
            }
            this.events = n;
            this.bytes = size;
        }
    }

    private final DataSource dataSource;
    private final String schema;
    private final TransactionBounds bounds;
    private final Runnable afterCommit;
    private final GroupCommitSettings settings;
    private final Alone alone;
    private final AppendBatchSql sql;
    private final ReentrantLock lock = new ReentrantLock();
    private final ArrayDeque<Pending> queue = new ArrayDeque<>();
    /** The streams of the batches in flight: no two batches in flight share one. */
    private final Set<String> busy = new HashSet<>();
    private int inFlight;
    /** The appends of the batches in flight. */
    private int inFlightAppends;

    AppendBatcher(DataSource dataSource, String schema, TransactionBounds bounds, Runnable afterCommit,
            GroupCommitSettings settings, Alone alone) {
        this.dataSource = dataSource;
        this.schema = schema;
        this.bounds = bounds;
        this.afterCommit = afterCommit;
        this.settings = settings;
        this.alone = alone;
        this.sql = new AppendBatchSql(schema);
    }

    /**
     * Appends validated {@code prepared} appends, alone or in a batch with concurrent ones. Returns
     * the results, or null when the caller must append alone (the batch wrote nothing of it).
     *
     * @throws StoreException as an append alone would, for this append only
     */
    List<AppendResult> append(List<StreamAppend> prepared, boolean idsChosenByCaller, OffsetDateTime createdAt) {
        Pending self = new Pending(prepared, idsChosenByCaller, createdAt);
        List<List<Pending>> start;
        lock.lock();
        try {
            queue.addLast(self);
            start = dispatch();
        } finally {
            lock.unlock();
        }
        handOut(start);
        Turn turn = await(self);
        return switch (turn) {
            case Done done -> done.results();
            case Failed failed -> throw failed.failure();
            case GoAlone goAlone -> null;
            case Lead unexpected -> throw new IllegalStateException("a batch was handed to a caller twice");
        };
    }

    private Turn await(Pending self) {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    // No timeout: the wait ends when the batch ahead ends, and that batch is an append
                    // as bounded as any other (the pool's connection timeout, the transaction bounds).
                    Turn turn = self.turn.get();
                    return turn instanceof Lead lead ? runBatch(lead.batch(), self) : turn;
                } catch (InterruptedException e) {
                    interrupted = true;
                    if (withdraw(self)) {
                        throw new StoreException("append to " + Appender.describe(self.prepared)
                                + " interrupted while it waited for its group commit; nothing was written", null, e);
                    }
                    // Already in a batch: it may commit, so wait for the outcome the caller must learn.
                } catch (ExecutionException e) {
                    throw new IllegalStateException("a group commit turn failed", e.getCause());
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private boolean withdraw(Pending self) {
        lock.lock();
        try {
            return queue.remove(self);
        } finally {
            lock.unlock();
        }
    }

    /** Commits {@code batch}, led by {@code self}, starts what may start next, and returns {@code self}'s turn. */
    private Turn runBatch(List<Pending> batch, Pending self) {
        long start = System.nanoTime();
        if (batch.size() == 1) {
            boolean committed = false;
            try {
                List<AppendResult> results = alone.append(self.prepared, self.idsChosenByCaller, self.createdAt);
                committed = true;
                return new Done(results);
            } finally {
                ended(batch);
                report(batch, committed ? 1 : 0, 0, start);
            }
        }
        List<Turn> turns = null;
        try {
            turns = commit(batch, start);
        } finally {
            ended(batch);
            if (turns == null) {
                // An Error: the followers must not wait for ever, and cannot know whether the batch committed.
                StoreException unknown = new StoreException("group commit of " + batch.size() + " appends failed"
                        + " unexpectedly; whether it committed is unknown", null, null);
                batch.stream().filter(p -> p != self).forEach(p -> p.turn.complete(new Failed(unknown)));
            }
        }
        Turn mine = null;
        for (int i = 0; i < batch.size(); i++) {
            if (batch.get(i) == self) {
                mine = turns.get(i);
            } else {
                batch.get(i).turn.complete(turns.get(i));
            }
        }
        return mine;
    }

    /** {@code batch} is no longer in flight: frees its streams and starts what may start now. */
    private void ended(List<Pending> batch) {
        List<List<Pending>> start;
        lock.lock();
        try {
            inFlight--;
            inFlightAppends -= batch.size();
            batch.forEach(p -> p.streams.forEach(busy::remove));
            start = dispatch();
        } finally {
            lock.unlock();
        }
        handOut(start);
    }

    /**
     * Takes the batches that may start now off the queue (under the lock): in queue order, the
     * appends none of whose streams a batch in flight writes, up to the bounds; with no batch in
     * flight any such batch, beside others only a full one or one as large as they are (see the
     * class comment).
     */
    private List<List<Pending>> dispatch() {
        List<List<Pending>> start = List.of();
        while (inFlight < settings.maxInFlight() && !queue.isEmpty()) {
            List<Pending> batch = new ArrayList<>();
            long bytes = 0;
            int events = 0;
            boolean full = false;
            for (Pending p : queue) {
                if (batch.size() == settings.maxAppends()) {
                    full = true;
                    break;
                }
                if (p.streams.stream().anyMatch(busy::contains)) {
                    continue;
                }
                if (!batch.isEmpty() && bytes + p.bytes > settings.maxBytes()) {
                    full = true;
                    break;
                }
                batch.add(p);
                bytes += p.bytes;
                events += p.events;
            }
            full |= batch.size() >= settings.maxAppends();
            if (batch.isEmpty() || (inFlight > 0 && !full
                    && (events < START_EVENTS || batch.size() * inFlight < inFlightAppends))) {
                break;
            }
            Set<Pending> taken = Collections.newSetFromMap(new IdentityHashMap<>());
            taken.addAll(batch);
            queue.removeIf(taken::contains);
            batch.forEach(p -> busy.addAll(p.streams));
            inFlight++;
            inFlightAppends += batch.size();
            if (start.isEmpty()) {
                start = new ArrayList<>(1);
            }
            start.add(batch);
        }
        return start;
    }

    /** Hands each batch to its first caller, who leads it (outside the lock). */
    private static void handOut(List<List<Pending>> batches) {
        batches.forEach(batch -> batch.get(0).turn.complete(new Lead(batch)));
    }

    /** One transaction, one statement for the whole batch; a turn per append, in batch order. */
    private List<Turn> commit(List<Pending> batch, long start) {
        List<AppendBatchSql.Item> items = batch.stream().map(p -> new AppendBatchSql.Item(p.prepared, p.createdAt,
                p.idsChosenByCaller))
                .toList();
        List<AppendBatchSql.Outcome> outcomes;
        Connection connection;
        try {
            connection = dataSource.getConnection();
        } catch (SQLException e) {
            return failAll(batch, e, start); // nothing was sent
        }
        try {
            outcomes = OwnTransaction.run(connection, bounds, c -> sql.execute(c, items));
        } catch (SQLException e) {
            return failedBatch(batch, e, start);
        } catch (RuntimeException e) {
            // A bug in building or reading the statement: with autocommit the statement may have committed.
            StoreException unknown = new StoreException("group commit of " + batch.size() + " appends failed; whether"
                    + " it committed is unknown: " + e, null, e);
            report(batch, 0, 0, start);
            return batch.stream().<Turn>map(p -> new Failed(unknown)).toList();
        } finally {
            closeQuietly(connection);
        }
        List<Turn> turns = new ArrayList<>(batch.size());
        int written = 0;
        int handedBack = 0;
        for (int i = 0; i < batch.size(); i++) {
            Pending p = batch.get(i);
            Turn turn = switch (outcomes.get(i)) {
                case AppendBatchSql.Written w -> new Done(w.results());
                // A resend of an append that committed also fails its condition: alone, the append
                // tells the two apart (ResendCheck), as without group commit.
                case AppendBatchSql.Conflict c when p.idsChosenByCaller -> GO_ALONE;
                case AppendBatchSql.Conflict c -> new Failed(Appender.conflict(c.sqlState(),
                        p.prepared.get(Math.min(c.index(), p.prepared.size() - 1)), c.actual(), c.deleted(), null));
                case AppendBatchSql.NotTried n -> GO_ALONE;
            };
            if (turn instanceof Done) {
                written++;
            } else if (turn instanceof GoAlone) {
                handedBack++;
            }
            turns.add(turn);
        }
        if (written > 0) {
            afterCommit.run(); // one wake-up for the whole batch
        }
        report(batch, written, handedBack, start);
        return turns;
    }

    /**
     * A batch that failed as a whole. Unless the failure leaves its outcome unknown (the connection
     * broke: with autocommit the statement may have committed), nothing was written, and every
     * append goes alone, where a transient failure is retried and any other reaches its own caller.
     */
    private List<Turn> failedBatch(List<Pending> batch, SQLException e, long start) {
        String state = e.getSQLState();
        if (e instanceof SQLTransientConnectionException || state == null || state.startsWith("08")
                || state.startsWith("57")) {
            return failAll(batch, e, start);
        }
        log.debug("waymark store: a group commit of {} appends failed with {} and wrote nothing; each appends alone",
                batch.size(), state, e);
        report(batch, 0, batch.size(), start);
        return batch.stream().<Turn>map(p -> GO_ALONE).toList();
    }

    private List<Turn> failAll(List<Pending> batch, SQLException e, long start) {
        report(batch, 0, 0, start);
        return batch.stream().<Turn>map(p -> new Failed(
                SqlErrors.translate(e, "append to " + Appender.describe(p.prepared), schema))).toList();
    }

    private void report(List<Pending> batch, int committed, int handedBack, long start) {
        long now = System.nanoTime();
        long oldest = batch.stream().mapToLong(p -> p.enqueuedAt).min().orElse(start);
        AppendBatch stats = new AppendBatch(batch.size(), batch.stream().mapToInt(p -> p.events).sum(),
                batch.stream().mapToLong(p -> p.bytes).sum(), committed, handedBack,
                Duration.ofNanos(Math.max(0, start - oldest)), Duration.ofNanos(now - start));
        try {
            settings.listener().batchEnded(stats);
        } catch (RuntimeException e) {
            log.warn("waymark store: the append batch listener failed on {}; ignored", stats, e);
        }
    }

    private static void closeQuietly(Connection connection) {
        try {
            connection.close();
        } catch (SQLException e) {
            log.debug("waymark store: closing the connection of a group commit failed", e);
        }
    }
}
