package dev.waymark.store.internal;

import dev.waymark.store.AppendBatch;
import dev.waymark.store.AppendResult;
import dev.waymark.store.EventData;
import dev.waymark.store.StoreException;
import dev.waymark.store.StreamAppend;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.locks.ReentrantLock;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Group commit for appends that commit on their own (issue 31), by leader and followers, with no
 * thread of its own and no timer. A caller that finds no batch in flight is the leader of a batch
 * of one and appends at once, exactly as without group commit. Callers that arrive while a batch
 * is in flight queue up; when the batch ends, its leader hands the queue (up to the size and byte
 * bounds) to the first of them, which commits them all with one {@code append_batch} statement in
 * one transaction while the next callers queue up. So batches grow with concurrency only, and each
 * caller still returns after its own append committed (or failed): nothing is acknowledged early.
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
    private record Failed(StoreException failure) implements Turn {}

    /** Append alone: the batch wrote nothing of this append. */
    private record GoAlone() implements Turn {}

    private static final GoAlone GO_ALONE = new GoAlone();

    /** One caller's append, waiting or in a batch. */
    private static final class Pending {
        final List<StreamAppend> prepared;
        final boolean idsChosenByCaller;
        final OffsetDateTime createdAt;
        final int events;
        final long bytes;
        final long enqueuedAt = System.nanoTime();
        final CompletableFuture<Turn> turn = new CompletableFuture<>();

        Pending(List<StreamAppend> prepared, boolean idsChosenByCaller, OffsetDateTime createdAt) {
            this.prepared = prepared;
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
    private boolean inFlight;

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
        boolean lead;
        lock.lock();
        try {
            lead = !inFlight;
            if (lead) {
                inFlight = true;
            } else {
                queue.addLast(self);
            }
        } finally {
            lock.unlock();
        }
        Turn turn = lead ? runBatch(List.of(self), self) : await(self);
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

    /** Commits {@code batch}, led by {@code self}, hands the queue on, and returns {@code self}'s turn. */
    private Turn runBatch(List<Pending> batch, Pending self) {
        long start = System.nanoTime();
        if (batch.size() == 1) {
            boolean committed = false;
            try {
                List<AppendResult> results = alone.append(self.prepared, self.idsChosenByCaller, self.createdAt);
                committed = true;
                return new Done(results);
            } finally {
                handOver();
                report(batch, committed ? 1 : 0, 0, start);
            }
        }
        List<Turn> turns = null;
        try {
            turns = commit(batch, start);
        } finally {
            handOver();
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

    /** Passes the batch slot to the first queued caller with the queue's head as its batch, or frees it. */
    private void handOver() {
        List<Pending> next;
        lock.lock();
        try {
            if (queue.isEmpty()) {
                inFlight = false;
                return;
            }
            next = new ArrayList<>(Math.min(queue.size(), settings.maxAppends()));
            long bytes = 0;
            while (!queue.isEmpty() && next.size() < settings.maxAppends()) {
                Pending p = queue.peekFirst();
                if (!next.isEmpty() && bytes + p.bytes > settings.maxBytes()) {
                    break;
                }
                next.add(queue.pollFirst());
                bytes += p.bytes;
            }
        } finally {
            lock.unlock();
        }
        next.get(0).turn.complete(new Lead(next));
    }

    /** One transaction, one statement for the whole batch; a turn per append, in batch order. */
    private List<Turn> commit(List<Pending> batch, long start) {
        List<AppendBatchSql.Item> items = batch.stream().map(p -> new AppendBatchSql.Item(p.prepared, p.createdAt))
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
