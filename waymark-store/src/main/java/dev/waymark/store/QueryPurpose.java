package dev.waymark.store;

/**
 * What a statement Waymark sent to the database was for: the tag of the store's query count
 * ({@link EventStore#queryCount(QueryPurpose)}, and the Micrometer counter
 * {@code waymark.store.queries}), so that an operator can see what the library costs, idle or busy.
 */
public enum QueryPurpose {
    /** A page of events read (stream, category, all; subscription readers included). */
    READ,
    /** An append, in a transaction of the store's or on the caller's connection. */
    APPEND,
    /** The shared head probe of a store handle: the head position, the horizon, hidden events. */
    PROBE,
    /** A look at the visibility horizon or the head on request ({@link EventStore#horizon()}, {@link EventStore#headPosition()}). */
    HORIZON,
    /** A NOTIFY sent, or the heartbeat of the LISTEN connection. */
    NOTIFY,
    /** A sharded pool's lease work: renewals with the worker heartbeat, claims, releases. */
    LEASE,
    /** A subscription's checkpoint read or write. */
    CHECKPOINT,
    /** A dead letter written, read or replayed. */
    DEAD_LETTER,
    /** Anything else Waymark runs through the store's data source (workflows, migrations, stream lifecycle). */
    OTHER
}
