package dev.waymark.kafka.internal;

import dev.waymark.kafka.DeadLetterPolicy;
import dev.waymark.kafka.DeadLetterTopicException.Problem;
import dev.waymark.kafka.DeadLetterTopicException;
import dev.waymark.kafka.DeadLetterTracing;
import dev.waymark.kafka.KafkaSourceConfig;
import dev.waymark.kafka.KafkaSourceEvent.Kind;
import dev.waymark.kafka.KafkaSourceListener;
import dev.waymark.store.DeadLetterReason;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Publishes dead letters and waits for the broker's acknowledgement. The producer (idempotent,
 * {@code acks=all}) is created on first use, sized for dead letters (see
 * {@link ClientSettings#producer(KafkaSourceConfig, long, int)}), and is thread-safe; a publish
 * that fails or times out is reported ({@link Kind#DEAD_LETTER_FAILED}) and throws, so the offset
 * is not committed past the record.
 */
final class DeadLetterPublisher implements AutoCloseable {

    private final KafkaSourceConfig config;
    private final DeadLetterPolicy.Named policy;
    private final DeadLetterTopics topics;
    private final Events events;
    private final int headroom;
    private KafkaProducer<byte[], byte[]> producer;
    /** The producer's max.request.size, once it exists. */
    private volatile String maxRequestSize = "unknown";
    private boolean closed;

    DeadLetterPublisher(KafkaSourceConfig config, DeadLetterPolicy.Named policy, DeadLetterTopics topics,
            Events events) {
        this.config = config;
        this.policy = policy;
        this.topics = topics;
        this.events = events;
        this.headroom = DeadLetterRecords.headroom(config.groupId());
    }

    private synchronized KafkaProducer<byte[], byte[]> producer() {
        if (closed) {
            throw new IllegalStateException("kafka source '" + config.name() + "' is closed");
        }
        if (producer == null) {
            // Created after the start check, which learned how large a record the source topics take.
            Map<String, Object> props = ClientSettings.producer(config, topics.largestSourceRecord(), headroom);
            producer = new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
            maxRequestSize = String.valueOf(props.get(ProducerConfig.MAX_REQUEST_SIZE_CONFIG));
        }
        return producer;
    }

    /**
     * Publishes {@code record} to its dead-letter topic and waits for the acknowledgement.
     *
     * @throws DeadLetterTopicException when publishing fails or outlives the broker operation
     *     timeout, or when the source's own topic pattern matches the dead-letter topic (nothing is
     *     published)
     * @throws InterruptedException when interrupted while waiting (nothing is committed)
     */
    RecordMetadata publish(ConsumerRecord<byte[], byte[]> record, DeadLetterReason reason, int attempt)
            throws InterruptedException {
        String target = policy.topicFor(record.topic());
        refuseOwnTopic(record, target);
        ProducerRecord<byte[], byte[]> out = DeadLetterRecords.of(record, target, reason, attempt, config.groupId());
        Duration timeout = config.brokerRetry().timeout();
        List<DeadLetterTracing.Scope> traces = new ArrayList<>();
        for (KafkaSourceListener l : config.listeners()) {
            if (l instanceof DeadLetterTracing tracing) {
                traces.add(tracing.publishing(record, out));
            }
        }
        Throwable error = null;
        try {
            return producer().send(out).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            error = e.getCause();
            throw failure(record, target, e.getCause());
        } catch (InterruptException e) {
            error = e;
            Thread.interrupted(); // the client set the flag; report it the Java way instead
            InterruptedException interrupted = new InterruptedException("interrupted while publishing a dead letter");
            interrupted.initCause(e);
            throw interrupted;
        } catch (TimeoutException | RuntimeException e) {
            error = e;
            throw failure(record, target, e);
        } finally {
            for (DeadLetterTracing.Scope scope : traces) {
                scope.end(error);
            }
        }
    }

    /**
     * A source subscribed by pattern would read a dead letter back from a topic its pattern matches
     * and dead-letter it again, one topic deeper each time ({@code orders.DLT.DLT}). The consumer
     * matches the whole topic name, as {@link java.util.regex.Matcher#matches()} does. (The start
     * and assignment checks refuse such a topic first; this holds even without them.)
     */
    private void refuseOwnTopic(ConsumerRecord<byte[], byte[]> record, String target) {
        Pattern pattern = config.topicPattern();
        if (pattern != null && pattern.matcher(target).matches()) {
            throw new DeadLetterTopicException("kafka source '" + config.name() + "': dead-letter topic '" + target
                    + "' matches the source's own topic pattern '" + pattern + "', so it would read its dead letters"
                    + " back; nothing published, nothing committed (exclude it from the pattern or choose another"
                    + " dead-letter topic)", Problem.READ_BY_SOURCE, target, record.topic(), record.partition(),
                    record.offset(), null);
        }
    }

    private DeadLetterTopicException failure(ConsumerRecord<byte[], byte[]> record, String target, Throwable cause) {
        String remedy = cause instanceof RecordTooLargeException
                ? "; the dead letter (the record's key, value and headers plus the dead-letter headers) is larger than"
                        + " the dead-letter producer's max.request.size (" + maxRequestSize + " bytes) or the topic's"
                        + " max.message.bytes allows: raise max.message.bytes of '" + target + "' to the source"
                        + " topic's plus " + headroom + " bytes, and producerProperty(\"max.request.size\") if the"
                        + " source topic takes records over it"
                : "";
        events.emit(Kind.DEAD_LETTER_FAILED, new TopicPartition(record.topic(), record.partition()), record.offset(),
                target + ": " + cause);
        return new DeadLetterTopicException("kafka source '" + config.name() + "': publishing a dead letter to '"
                + target + "' failed, nothing committed: " + cause + remedy, Problem.PUBLISH_FAILED, target,
                record.topic(), record.partition(), record.offset(), cause);
    }

    @Override
    public synchronized void close() {
        closed = true;
        if (producer != null) {
            producer.close(config.brokerRetry().timeout());
        }
    }
}
