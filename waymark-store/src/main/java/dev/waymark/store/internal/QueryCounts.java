package dev.waymark.store.internal;

import dev.waymark.store.EventStore;
import dev.waymark.store.QueryPurpose;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/** The statements a store handle ran, by purpose; cheap to count from any thread. */
public final class QueryCounts {

    /** Counts of a store Waymark did not build: they go nowhere. */
    private static final QueryCounts DISCARDED = new QueryCounts();

    private final Map<QueryPurpose, LongAdder> counts = new EnumMap<>(QueryPurpose.class);

    /** Counts starting at zero. */
    public QueryCounts() {
        for (QueryPurpose p : QueryPurpose.values()) {
            counts.put(p, new LongAdder());
        }
    }

    /** The counts of {@code store}; a store Waymark did not build has counts that stay at zero. */
    public static QueryCounts of(EventStore store) {
        return store instanceof JdbcEventStore s ? s.queryCounts() : DISCARDED;
    }

    /** One more statement (or transaction of statements) for {@code purpose}. */
    public void count(QueryPurpose purpose) {
        if (this != DISCARDED) {
            counts.get(purpose).increment();
        }
    }

    /** How many were counted for {@code purpose}. */
    public long get(QueryPurpose purpose) {
        return counts.get(purpose).sum();
    }
}
