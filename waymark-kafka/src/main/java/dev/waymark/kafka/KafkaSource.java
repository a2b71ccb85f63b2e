package dev.waymark.kafka;

import dev.waymark.core.Stoppable;
import dev.waymark.kafka.internal.SourceRuntime;
import dev.waymark.messaging.Concurrency;
import dev.waymark.messaging.Ingested;
import dev.waymark.messaging.MessageSource;
import dev.waymark.messaging.MessagingConfigException;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link MessageSource} over Kafka topics, for any {@link dev.waymark.messaging.Concurrency}.
 *
 * <p>Guarantees:
 * <ul>
 *   <li><b>At-least-once, nothing skipped.</b> Offsets are committed only for the contiguous
 *       acknowledged prefix of each partition, so out-of-order acknowledgements (orderedByKey,
 *       unordered) never commit past an unfinished record. Redelivery happens after a retry, a
 *       rebalance, a restart or an unacknowledged shutdown; handlers must tolerate duplicates
 *       (key on the message id {@code topic-partition-offset}).</li>
 *   <li><b>Retry.</b> {@code retry(delay)} redelivers the record from memory after the delay, with
 *       no seek and no refetch: the records the processor orders after it (the rest of its
 *       partition under serial, the records of its key under orderedByKey, none under unordered)
 *       wait in memory behind it and come, in their original order, after it; other keys and other
 *       partitions go on meanwhile. Nothing is committed past it until it is acknowledged.
 *       Deliveries it superseded are never handed out, and acknowledging one already handed out
 *       does nothing. Past {@link KafkaSourceConfigBuilder#retryHoldBytes(long) retryHoldBytes} the
 *       partition is paused and sought back to the record instead (the records after it are
 *       fetched again); if the record is gone then (retention, compaction), consumption goes on
 *       from the next record with a warning, whatever {@code auto.offset.reset} says. The envelope's
 *       attempt counts retries of that record in this assignment (it restarts at 0 after a
 *       rebalance or restart).</li>
 *   <li><b>Rebalances.</b> On revoke, acknowledged offsets are committed and records buffered for
 *       the partition are dropped; acknowledgements from before a revoke or re-assignment do
 *       nothing (no commit, seek or pause).</li>
 *   <li><b>Halt.</b> {@code halt} pauses the partition and nothing past the halted record is
 *       committed; the consumer keeps polling (membership is kept, no eviction). Resume with
 *       {@link #resumeHalted(String, int)}, or restart: a new session begins at the halted record.</li>
 *   <li><b>Dead letters</b> follow the {@link DeadLetterPolicy}: published, key and value byte for
 *       byte, and acknowledged by the broker before the offset moves past them; a failed publish
 *       commits nothing, emits {@link KafkaSourceEvent.Kind#DEAD_LETTER_FAILED} and throws a
 *       {@link DeadLetterTopicException}. The dead-letter topics are checked when the consumer
 *       starts, before it joins the group (under a pattern, when each topic is first assigned): a
 *       missing one ends the source with a {@link DeadLetterTopicException} before any record is
 *       handed out, or is created ({@link KafkaSourceConfigBuilder#missingDeadLetterTopic}).</li>
 *   <li><b>Keys and values</b> arrive exactly as produced: the key as a
 *       {@link dev.waymark.messaging.MessageKey} (null for none), a null value as a tombstone.</li>
 *   <li><b>Failures.</b> A fatal client failure, or a retriable one that outlives
 *       {@link KafkaSourceConfig.BrokerRetry}, ends the source: {@link #poll} throws a
 *       {@link KafkaSourceException} (with topic, partition and offset when known), so the processor
 *       fails; the source never ends normally unless shut down. While the broker is unreachable and
 *       nothing needs committing, the consumer waits for it, as the Kafka client does.</li>
 *   <li><b>Shutdown.</b> {@link #shutdown()} stops handing out records at once, waits up to the drain
 *       timeout for acknowledgements of records already handed out (not once its processor has
 *       ended: {@link #processorEnded()}), commits and closes; then {@link #isFinished()} is true.
 *       {@link #close()} does the same without waiting. A processor that fails shuts its source
 *       down at once, so the consumer leaves the group and the other members take its partitions.
 *       The consumer leaves the group whenever it closes, as a static member
 *       ({@code group.instance.id}) too, unless
 *       {@link KafkaSourceConfigBuilder#leaveGroupOnClose(boolean) leaveGroupOnClose(false)}.</li>
 * </ul>
 *
 * <p>One thread owns the {@code KafkaConsumer}; acknowledgements from handler threads only update
 * in-memory state and wake that thread, so they never wait for a poll.
 */
public final class KafkaSource implements MessageSource, Stoppable {

    private static final Logger log = LoggerFactory.getLogger(KafkaSource.class);

    private final KafkaSourceConfig config;
    private final SourceRuntime runtime;

    private KafkaSource(KafkaSourceConfig config) {
        this.config = config;
        this.runtime = new SourceRuntime(config);
    }

    /** A source for {@code config}. Nothing connects until the first {@link #poll}. */
    public static KafkaSource of(KafkaSourceConfig config) {
        if (config == null) {
            throw new MessagingConfigException("config must not be null");
        }
        log.info("{}", config.describe());
        return new KafkaSource(config);
    }

    /** Its configuration. */
    public KafkaSourceConfig config() {
        return config;
    }

    /** The configured name ({@code kafka:<topics>} by default), used in logs, events and metrics. */
    @Override
    public String name() {
        return config.name();
    }

    /**
     * The next record, waiting up to {@code timeout}; starts the consumer on the first call. After
     * {@link #shutdown()} it returns nothing, once the consumer closed or {@code timeout} passed, so a
     * caller that polls until {@link #isFinished()} does not spin while the source drains.
     *
     * @throws KafkaSourceException once the source failed for good
     */
    @Override
    public Optional<Ingested> poll(Duration timeout) throws InterruptedException {
        return runtime.poll(timeout);
    }

    /**
     * Learns how the processor orders records, so a retry holds back only what that order puts
     * after the retried record: the rest of its partition (serial, or orderedByKey over
     * {@link KafkaOrdering#PARTITION}), the records of its key (orderedByKey), or nothing
     * (unordered). Serial until called.
     */
    @Override
    public void processedWith(Concurrency concurrency) {
        if (concurrency == null) {
            throw new IllegalArgumentException("concurrency must not be null");
        }
        runtime.processedWith(concurrency);
    }

    /**
     * True once the consumer committed and closed after a shutdown, and the dead-letter producer
     * closed; never after a failure.
     */
    @Override
    public boolean isFinished() {
        return runtime.isFinished();
    }

    /**
     * Graceful stop; returns at once. No record is handed out after it; the consumer commits and
     * closes once every record handed out was acknowledged, or after the drain timeout.
     */
    @Override
    public void shutdown() {
        runtime.shutdown(false);
    }

    /**
     * Its processor has ended and acknowledges nothing more: a {@link #shutdown()} (before or after
     * this) no longer waits for the acknowledgement of records handed out, but commits what was
     * acknowledged and closes the consumer at once, leaving the group (unless a static member keeps
     * its place, see {@link KafkaSourceConfigBuilder#leaveGroupOnClose(boolean)}); the rest is
     * redelivered to the group's next owner of the partition. {@code ProcessingApp} calls this when a processor
     * ends, and shuts the source of a failed one down right away.
     */
    @Override
    public void processorEnded() {
        runtime.processorEnded();
    }

    /**
     * Stops gracefully and waits: as {@link #shutdown()}, the records handed out get up to {@code
     * timeout} to be acknowledged (and at most the configured drain timeout); then the source stops
     * as {@link #close()} does, waiting up to twice the broker operation timeout more for the final
     * commit and the closing of the consumer and the dead-letter producer.
     *
     * @return whether the consumer and the dead-letter producer had closed when the call returned
     * @throws IllegalArgumentException if {@code timeout} is null or negative
     */
    @Override
    public boolean stop(Duration timeout) {
        if (timeout == null || timeout.isNegative()) {
            throw new IllegalArgumentException("stop timeout must be >= 0, got " + timeout);
        }
        runtime.shutdown(false);
        try {
            if (runtime.awaitClosed(timeout)) {
                return true;
            }
            runtime.shutdown(true);
            return runtime.awaitClosed(config.brokerRetry().timeout().multipliedBy(2));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return runtime.isFinished();
        }
    }

    /**
     * Stops without waiting for outstanding acknowledgements: commits what is acknowledged and
     * closes the consumer and the dead-letter producer, waiting up to twice the broker operation
     * timeout for them (not {@link Stoppable#DEFAULT_CLOSE_TIMEOUT}).
     */
    @Override
    public void close() {
        runtime.shutdown(true);
        try {
            runtime.awaitClosed(config.brokerRetry().timeout().multipliedBy(2));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Waits until the consumer has made its final commit and closed, and the dead-letter producer
     * closed; true if they did in time.
     */
    public boolean awaitClosed(Duration timeout) throws InterruptedException {
        return runtime.awaitClosed(timeout);
    }

    /** The failure that ended the source, if any. */
    public Optional<KafkaSourceException> failure() {
        return Optional.ofNullable(runtime.failure());
    }

    /**
     * Resumes a partition a halt stopped: it is sought back to the halted record and unpaused, so
     * the halted record is delivered again first (or, if a record before it was retried after the
     * halt, that record: nothing after it was acknowledged for good). Useful when driving the source directly; a halted
     * processor has ended, so with {@code ProcessingApp} restart with a new source instead.
     *
     * @return false if this source does not hold the partition or it is not halted
     */
    public boolean resumeHalted(String topic, int partition) {
        return runtime.resumeHalted(new TopicPartition(topic, partition));
    }

    /**
     * The halted partitions ({@code topic-partition}) and the offset each is halted at: the halted
     * record, or an earlier record retried after the halt, where a resume starts.
     */
    public Map<String, Long> halted() {
        return runtime.halted().entrySet().stream().collect(java.util.stream.Collectors.toMap(
                e -> e.getKey().topic() + "-" + e.getKey().partition(), Map.Entry::getValue));
    }
}
