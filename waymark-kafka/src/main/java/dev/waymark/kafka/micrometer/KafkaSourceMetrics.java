package dev.waymark.kafka.micrometer;

import dev.waymark.kafka.KafkaSourceEvent;
import dev.waymark.kafka.KafkaSourceListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Micrometer meters for Kafka sources (an optional dependency). Register it as a listener of every
 * source it should measure:
 *
 * <pre>{@code
 * KafkaSourceMetrics metrics = new KafkaSourceMetrics(registry);
 * KafkaSource source = KafkaSource.of(KafkaSourceConfig.builder(servers, group).topics("orders")
 *         .listener(metrics).build());
 * }</pre>
 *
 * <p>Counters, tagged {@code source}: {@code waymark.kafka.commits} (partition offsets committed),
 * {@code waymark.kafka.commit_failures}, {@code waymark.kafka.seeks}, {@code waymark.kafka.pauses},
 * {@code waymark.kafka.dead_letters}, {@code waymark.kafka.dead_letter_failures} (failed publications
 * to a dead-letter topic), {@code waymark.kafka.rebalances} (also tagged {@code kind}:
 * assigned, revoked, lost), {@code waymark.kafka.retention_gaps}, {@code waymark.kafka.fatal},
 * {@code waymark.kafka.retries_held} (retries redelivered from memory, no seek),
 * {@code waymark.kafka.seek_fallbacks} (retries or held records past the hold budget, sought back).
 * Gauge {@code waymark.kafka.held_records} tagged {@code source}: records held behind retry
 * barriers, updated every commit interval.
 * Gauge {@code waymark.kafka.lag} tagged {@code source, topic, partition}: records after the
 * committed offset, updated every commit interval while the partition is assigned (removed on revoke).
 */
public final class KafkaSourceMetrics implements KafkaSourceListener {

    private final MeterRegistry registry;
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();
    private final Map<String, Lag> lags = new ConcurrentHashMap<>();
    private final Map<String, AtomicLong> held = new ConcurrentHashMap<>();

    private record Lag(AtomicLong value, Gauge gauge) {}

    /** Meters in {@code registry}. */
    public KafkaSourceMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    /**
     * Counts the event, or updates (lag) or removes (revoke, loss) the partition's lag gauge, or
     * updates the source's held-records gauge.
     */
    @Override
    public void onEvent(KafkaSourceEvent e) {
        switch (e.kind()) {
            case COMMITTED -> count("waymark.kafka.commits", e.source(), null);
            case COMMIT_FAILED -> count("waymark.kafka.commit_failures", e.source(), null);
            case SEEK -> count("waymark.kafka.seeks", e.source(), null);
            case PAUSED -> count("waymark.kafka.pauses", e.source(), null);
            case DEAD_LETTERED -> count("waymark.kafka.dead_letters", e.source(), null);
            case DEAD_LETTER_FAILED -> count("waymark.kafka.dead_letter_failures", e.source(), null);
            case RETENTION_GAP -> count("waymark.kafka.retention_gaps", e.source(), null);
            case FATAL -> count("waymark.kafka.fatal", e.source(), null);
            case RETRY_HELD -> count("waymark.kafka.retries_held", e.source(), null);
            case SEEK_FALLBACK -> count("waymark.kafka.seek_fallbacks", e.source(), null);
            case HELD -> held.computeIfAbsent(e.source(), source -> {
                AtomicLong value = new AtomicLong();
                Gauge.builder("waymark.kafka.held_records", value, AtomicLong::doubleValue)
                        .description("records held in memory behind retry barriers").tag("source", source)
                        .register(registry);
                return value;
            }).set(e.value());
            case ASSIGNED, REVOKED, LOST -> {
                count("waymark.kafka.rebalances", e.source(), e.kind().name().toLowerCase(Locale.ROOT));
                if (e.kind() != KafkaSourceEvent.Kind.ASSIGNED) {
                    Lag lag = lags.remove(lagKey(e));
                    if (lag != null) {
                        registry.remove(lag.gauge());
                    }
                }
            }
            case LAG -> lags.computeIfAbsent(lagKey(e), k -> {
                AtomicLong value = new AtomicLong();
                Gauge gauge = Gauge.builder("waymark.kafka.lag", value, AtomicLong::doubleValue)
                        .description("records in the partition after the committed offset")
                        .tag("source", e.source()).tag("topic", e.topic())
                        .tag("partition", Integer.toString(e.partition())).register(registry);
                return new Lag(value, gauge);
            }).value().set(e.value());
            case RESUMED, HALTED -> {
            }
        }
    }

    private static String lagKey(KafkaSourceEvent e) {
        return e.source() + "\u0000" + e.topic() + "\u0000" + e.partition();
    }

    private void count(String name, String source, String kind) {
        counters.computeIfAbsent(name + "\u0000" + source + "\u0000" + kind, k -> {
            Counter.Builder b = Counter.builder(name).tag("source", source);
            if (kind != null) {
                b.tag("kind", kind);
            }
            return b.register(registry);
        }).increment();
    }
}
