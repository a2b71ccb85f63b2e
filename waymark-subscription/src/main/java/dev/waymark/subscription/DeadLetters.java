package dev.waymark.subscription;

import dev.waymark.store.EventStore;
import dev.waymark.store.Partition;
import dev.waymark.store.QueryPurpose;
import dev.waymark.store.RecordedEvent;
import dev.waymark.store.plumbing.Jdbc;
import dev.waymark.store.plumbing.Schema;
import dev.waymark.subscription.internal.DeadLetterSql;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The dead letters of a store's subscriptions: list, count, get, replay and purge. Dead letters
 * are recorded by subscriptions in the same transaction that moves the checkpoint past the event.
 */
public final class DeadLetters {

    /** The outcome stored for a replay whose handler answered {@link Ack#ok()}. */
    public static final String REPLAYED_OK = "ok";

    private final EventStore store;
    private final DeadLetterSql sql;

    private DeadLetters(EventStore store) {
        this.store = store;
        this.sql = new DeadLetterSql(Schema.quote(store.schema()));
    }

    /** The dead letters of {@code store}'s schema. */
    public static DeadLetters of(EventStore store) {
        return new DeadLetters(store);
    }

    /** A subscription's dead letters, newest first, at most {@code limit}, with id below {@code beforeId} ({@code Long.MAX_VALUE} to start). */
    public List<DeadLetter> list(String subscription, long beforeId, int limit) {
        return list(subscription, null, beforeId, limit);
    }

    /** One member's dead letters, newest first. */
    public List<DeadLetter> list(String subscription, Partition member, long beforeId, int limit) {
        Checkpoints.requireNameArgument(subscription);
        if (limit < 1) {
            throw new SubscriptionConfigException("limit must be >= 1, got " + limit);
        }
        Integer m = member == null ? null : member.member();
        return Jdbc.inTransaction(store, QueryPurpose.DEAD_LETTER, "list dead letters of '" + subscription + "'",
                c -> sql.list(c, subscription, m, beforeId, limit));
    }

    /** How many dead letters a subscription has. */
    public long count(String subscription) {
        Checkpoints.requireNameArgument(subscription);
        return Jdbc.inTransaction(store, QueryPurpose.DEAD_LETTER, "count dead letters of '" + subscription + "'",
                c -> sql.count(c, subscription));
    }

    /** One dead letter by id. */
    public Optional<DeadLetter> get(long id) {
        return Jdbc.inTransaction(store, QueryPurpose.DEAD_LETTER, "read dead letter " + id, c -> sql.get(c, id));
    }

    /**
     * Delivers the selected dead letters to {@code handler} once each (attempt 0), in the order of
     * {@code ids} (a repeated id counts once), and records when and what it answered. A letter
     * already replayed successfully is skipped, so replay is idempotent for one caller. Concurrent
     * replays of one letter may both deliver it; the recorded outcome keeps the first
     * {@link #REPLAYED_OK}: a later answer (a retry, a failure) never overwrites it. The dead letters
     * stay recorded; purge them when done. The delivery's partition is {@link Partition#WHOLE}: a
     * letter records its member ({@link DeadLetter#member()}) but not the group's size, so a handler
     * that routes by partition should read the member from the letter.
     *
     * @return the letters that were delivered, with their recorded outcome
     * @throws SubscriptionConfigException if {@code ids} or {@code handler} is null, or {@code ids}
     *     holds a null; nothing is delivered
     * @throws SubscriptionException if a letter does not exist (nothing is delivered), or if a
     *     letter's event can no longer be read when its turn comes (the letters before it were
     *     delivered and their outcomes recorded; replaying the same ids again skips those that ended ok)
     */
    public List<DeadLetter> replay(List<Long> ids, EventHandler handler) {
        if (ids == null || handler == null) {
            throw new SubscriptionConfigException("replay needs dead letter ids and a handler, got ids=" + ids
                    + ", handler=" + handler);
        }
        if (ids.stream().anyMatch(Objects::isNull)) { // List.of(...).contains(null) would throw
            throw new SubscriptionConfigException("dead letter ids must not hold a null, got " + ids);
        }
        Set<Long> unique = new LinkedHashSet<>(ids);
        List<DeadLetter> letters = new ArrayList<>();
        for (long id : unique) {
            letters.add(get(id).orElseThrow(() -> new SubscriptionException("dead letter " + id
                    + " does not exist; nothing was replayed")));
        }
        List<DeadLetter> replayed = new ArrayList<>();
        for (DeadLetter letter : letters) {
            // read again: an earlier letter's handler, or another replay, may have replayed it since
            DeadLetter current = get(letter.id()).orElse(letter);
            if (current.replayOutcome().filter(REPLAYED_OK::equals).isPresent()) {
                continue;
            }
            String outcome = deliver(current, handler);
            Jdbc.inTransaction(store, QueryPurpose.DEAD_LETTER, "mark dead letter " + letter.id() + " replayed",
                    c -> {
                        sql.markReplayed(c, letter.id(), outcome);
                        return null;
                    });
            get(letter.id()).ifPresent(replayed::add); // purged meanwhile: nothing to report
        }
        return replayed;
    }

    /** Delivers one letter's event and says what the handler answered. */
    private String deliver(DeadLetter letter, EventHandler handler) {
        long id = letter.id();
        RecordedEvent event = store.readStreamForward(letter.streamName(), letter.streamVersion() - 1, 1).stream()
                .filter(e -> e.eventId().equals(letter.eventId()))
                .findFirst()
                .orElseThrow(() -> new SubscriptionException("dead letter " + id + ": event " + letter.eventId()
                        + " is no longer readable in stream '" + letter.streamName() + "'"));
        try {
            Ack ack = handler.handle(new Delivery(letter.subscription(), event, 0, Partition.WHOLE));
            if (ack == null) {
                return "failed: the handler returned null instead of an Ack";
            }
            return switch (ack) {
                case Ack.Ok ok -> REPLAYED_OK;
                case Ack.Retry retry -> "retry requested";
                case Ack.DeadLetter dead -> "dead-lettered again: " + dead.reason().summary();
            };
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SubscriptionException("replay of dead letter " + id + " interrupted", e);
        } catch (Exception e) {
            return "failed: " + e;
        }
    }

    /** Deletes a subscription's dead letters; returns how many. */
    public int purge(String subscription) {
        Checkpoints.requireNameArgument(subscription);
        return Jdbc.inTransaction(store, QueryPurpose.DEAD_LETTER, "purge dead letters of '" + subscription + "'",
                c -> sql.purge(c, subscription, null));
    }
}
