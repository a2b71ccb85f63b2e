package dev.waymark.store.micrometer;

import dev.waymark.store.AppendBatchListener;
import dev.waymark.store.EventStore;
import dev.waymark.store.Horizon;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import dev.waymark.store.QueryPurpose;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Micrometer meters of a store: the group commit meters of {@link #appendBatches}, and gauges of the store's visibility horizon (docs/ARCHITECTURE.md, "Append and global
 * order"), tagged {@code schema}: {@code waymark.store.horizon.hidden_events} (committed events readers cannot see yet) and
 * {@code waymark.store.horizon.oldest_writer} (seconds the oldest open writing transaction has been
 * running). One query per {@code minInterval} at most, however often the registry is scraped.
 *
 * <p>Also the counter {@code waymark.store.queries}, tagged {@code schema} and {@code purpose} (one of
 * {@link QueryPurpose}, lower case: {@code read}, {@code append}, {@code probe}, {@code lease},
 * {@code checkpoint}, ...): the statements the handle and the subscriptions and pools built on it
 * sent to the database ({@link EventStore#queryCount(QueryPurpose)}). Reading it costs no query.
 */
public final class StoreMetrics {

    private final EventStore store;
    private final Duration minInterval;
    private final AtomicReference<Reading> last = new AtomicReference<>();

    private record Reading(long at, Horizon horizon) {}

    private StoreMetrics(EventStore store, Duration minInterval) {
        this.store = store;
        this.minInterval = minInterval;
    }

    /** Registers the gauges of {@code store}, reading the horizon at most once per {@code minInterval}. */
    public static StoreMetrics bind(EventStore store, MeterRegistry registry, Duration minInterval) {
        StoreMetrics metrics = new StoreMetrics(store, minInterval);
        Gauge.builder("waymark.store.horizon.hidden_events", metrics, m -> m.horizon().hiddenEvents())
                .tag("schema", store.schema()).strongReference(true).register(registry);
        Gauge.builder("waymark.store.horizon.oldest_writer", metrics,
                m -> m.horizon().oldestWriter().toMillis() / 1000.0)
                .tag("schema", store.schema()).baseUnit("seconds").strongReference(true).register(registry);
        for (QueryPurpose purpose : QueryPurpose.values()) {
            FunctionCounter.builder("waymark.store.queries", store, s -> s.queryCount(purpose))
                    .tag("schema", store.schema()).tag("purpose", purpose.name().toLowerCase(Locale.ROOT))
                    .description("statements sent to the database, by purpose").register(registry);
        }
        return metrics;
    }

    /**
     * A listener for {@link dev.waymark.store.EventStoreBuilder#appendBatchListener} that records
     * every group commit of the store with schema {@code schema}, tagged {@code schema}:
     * {@code waymark.store.append.batch.size} (appends per batch, a distribution summary),
     * {@code waymark.store.append.batch.wait} (how long each batch's oldest append waited for it to
     * start, a timer), {@code waymark.store.append.batch.duration} (from taking a connection to the
     * commit, a timer) and {@code waymark.store.append.batch.alone} (appends handed back to be
     * appended alone, a counter).
     */
    public static AppendBatchListener appendBatches(MeterRegistry registry, String schema) {
        DistributionSummary size = DistributionSummary.builder("waymark.store.append.batch.size")
                .description("appends per group commit").baseUnit("appends").tag("schema", schema)
                .publishPercentiles(0.5, 0.99).register(registry);
        Timer wait = Timer.builder("waymark.store.append.batch.wait")
                .description("how long the oldest append of a group commit waited for it to start")
                .tag("schema", schema).publishPercentiles(0.5, 0.99).register(registry);
        Timer duration = Timer.builder("waymark.store.append.batch.duration")
                .description("a group commit from taking a connection to the commit").tag("schema", schema)
                .publishPercentiles(0.5, 0.99).register(registry);
        Counter alone = Counter.builder("waymark.store.append.batch.alone")
                .description("appends a group commit handed back to be appended alone").tag("schema", schema)
                .register(registry);
        return batch -> {
            size.record(batch.appends());
            wait.record(batch.longestWait());
            duration.record(batch.duration());
            alone.increment(batch.appendedAlone());
        };
    }

    private Horizon horizon() {
        Reading r = last.get();
        long now = System.nanoTime();
        if (r == null || now - r.at() >= minInterval.toNanos()) {
            r = new Reading(now, store.horizon());
            last.set(r);
        }
        return r.horizon();
    }
}
