package dev.waymark.kafka.internal;

import dev.waymark.kafka.DeadLetterHeaders;
import dev.waymark.kafka.DeadLetterPolicy;
import dev.waymark.kafka.DeadLetterTracing;
import dev.waymark.kafka.KafkaSourceConfig;
import dev.waymark.kafka.KafkaSourceException;
import dev.waymark.kafka.KafkaSourceListener;
import dev.waymark.messaging.DeadLetterReason;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Publishes dead letters and waits for the broker's acknowledgement. The producer (idempotent,
 * {@code acks=all}) is created on first use and is thread-safe; a publish that fails or times out
 * throws, so the offset is not committed past the record.
 */
final class DeadLetterPublisher implements AutoCloseable {

    private final KafkaSourceConfig config;
    private final DeadLetterPolicy.Named policy;
    private KafkaProducer<byte[], byte[]> producer;
    private boolean closed;

    DeadLetterPublisher(KafkaSourceConfig config, DeadLetterPolicy.Named policy) {
        this.config = config;
        this.policy = policy;
    }

    private synchronized KafkaProducer<byte[], byte[]> producer() {
        if (closed) {
            throw new IllegalStateException("kafka source '" + config.name() + "' is closed");
        }
        if (producer == null) {
            producer = new KafkaProducer<>(ClientSettings.producer(config), new ByteArraySerializer(),
                    new ByteArraySerializer());
        }
        return producer;
    }

    /**
     * Publishes {@code record} to its dead-letter topic and waits for the acknowledgement.
     *
     * @throws KafkaSourceException when publishing fails or outlives the broker operation timeout, or
     *     when the source's own topic pattern matches the dead-letter topic (nothing is published)
     * @throws InterruptedException when interrupted while waiting (nothing is committed)
     */
    RecordMetadata publish(ConsumerRecord<byte[], byte[]> record, DeadLetterReason reason, int attempt)
            throws InterruptedException {
        String target = policy.topicFor(record.topic());
        refuseOwnTopic(record, target);
        ProducerRecord<byte[], byte[]> out = new ProducerRecord<>(target, null, record.key(), record.value());
        for (Header h : record.headers()) {
            out.headers().add(h.key(), h.value());
        }
        add(out, DeadLetterHeaders.REASON_CODE, reason.code());
        add(out, DeadLetterHeaders.REASON, reason.summary());
        add(out, DeadLetterHeaders.ATTEMPT, Integer.toString(Math.max(attempt, 0)));
        add(out, DeadLetterHeaders.ORIGINAL_TOPIC, record.topic());
        add(out, DeadLetterHeaders.ORIGINAL_PARTITION, Integer.toString(record.partition()));
        add(out, DeadLetterHeaders.ORIGINAL_OFFSET, Long.toString(record.offset()));
        if (record.timestamp() >= 0) {
            add(out, DeadLetterHeaders.ORIGINAL_TIMESTAMP, Long.toString(record.timestamp()));
        }
        add(out, DeadLetterHeaders.GROUP, config.groupId());
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
     * matches the whole topic name, as {@link java.util.regex.Matcher#matches()} does.
     */
    private void refuseOwnTopic(ConsumerRecord<byte[], byte[]> record, String target) {
        Pattern pattern = config.topicPattern();
        if (pattern != null && pattern.matcher(target).matches()) {
            throw new KafkaSourceException("kafka source '" + config.name() + "': dead-letter topic '" + target
                    + "' matches the source's own topic pattern '" + pattern + "', so it would read its dead letters"
                    + " back; nothing published, nothing committed (exclude it from the pattern or choose another"
                    + " dead-letter topic)", record.topic(), record.partition(), record.offset(), null);
        }
    }

    private KafkaSourceException failure(ConsumerRecord<byte[], byte[]> record, String target, Throwable cause) {
        return new KafkaSourceException("kafka source '" + config.name() + "': publishing a dead letter to '" + target
                + "' failed, nothing committed: " + cause, record.topic(), record.partition(), record.offset(), cause);
    }

    private static void add(ProducerRecord<byte[], byte[]> out, String name, String value) {
        out.headers().add(name, value.getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public synchronized void close() {
        closed = true;
        if (producer != null) {
            producer.close(config.brokerRetry().timeout());
        }
    }
}
