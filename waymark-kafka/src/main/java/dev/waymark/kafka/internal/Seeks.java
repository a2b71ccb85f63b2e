package dev.waymark.kafka.internal;

import dev.waymark.kafka.KafkaSourceConfig;
import dev.waymark.kafka.KafkaSourceEvent.Kind;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies the seeks the {@link AckLedger} asks for (retries, halt resumes) on the consumer thread,
 * outside the ledger's lock. A target below the log start (deleted by retention meanwhile) moves up
 * to the log start, so consumption goes on from the first surviving record, which the ledger
 * reports as a retention gap. With {@code auto.offset.reset=earliest} the consumer's own reset of
 * the out-of-range position lands there too, so only other policies pay for the lookup; with
 * {@code latest} the reset would skip every surviving record, with {@code none} fail the source.
 */
final class Seeks {

    private static final Logger log = LoggerFactory.getLogger(Seeks.class);

    private final String source;
    private final Events events;
    private final Duration timeout;
    private final boolean toLogStart;

    Seeks(KafkaSourceConfig config, Events events) {
        this.source = config.name();
        this.events = events;
        this.timeout = config.brokerRetry().timeout();
        Object reset = ClientSettings.consumer(config).get(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG);
        this.toLogStart = !"earliest".equalsIgnoreCase(String.valueOf(reset).trim());
    }

    /** Seeks each partition to its target, or to its log start if that is beyond it. */
    void apply(Consumer<?, ?> consumer, Map<TopicPartition, Long> seeks) {
        if (seeks.isEmpty()) {
            return;
        }
        Map<TopicPartition, Long> logStarts = toLogStart ? logStarts(consumer, seeks.keySet()) : Map.of();
        seeks.forEach((tp, target) -> {
            long start = logStarts.getOrDefault(tp, -1L);
            consumer.seek(tp, Math.max(target, start));
            events.emit(Kind.SEEK, tp, target, null);
        });
    }

    /**
     * The log starts, or none if the broker does not answer in time: the seek then goes to the
     * target, and the reset policy decides if it is gone, as it does when retention deletes the
     * target between this lookup and the fetch.
     */
    private Map<TopicPartition, Long> logStarts(Consumer<?, ?> consumer, Set<TopicPartition> partitions) {
        while (true) {
            try {
                return consumer.beginningOffsets(partitions, timeout);
            } catch (WakeupException e) {
                // a processor thread's request interrupted the lookup; the next turn applies it
            } catch (InterruptException e) {
                throw e;
            } catch (RuntimeException e) {
                log.warn("kafka source '{}': log start of {} unknown ({}); seeking to the retried offsets as they"
                        + " are", source, partitions, e.toString());
                return Map.of();
            }
        }
    }
}
