package dev.waymark.kafka.internal;

import dev.waymark.kafka.DeadLetterPolicy;
import dev.waymark.kafka.KafkaSourceConfig;
import dev.waymark.kafka.KafkaSourceException;
import dev.waymark.messaging.Concurrency;
import dev.waymark.messaging.Ingested;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Everything behind a {@code KafkaSource}: the consumer loop and its thread (started on the first
 * poll, so building an app touches no broker), the acknowledgement ledger, the dead-letter topic
 * check and the dead-letter publisher.
 */
public final class SourceRuntime {

    static final Logger log = LoggerFactory.getLogger(SourceRuntime.class);

    private final KafkaSourceConfig config;
    private final Events events;
    private final ConsumerLoop loop;
    private final DeadLetterPublisher publisher;
    private Thread thread;
    private boolean stopped;
    /** Set once the consumer thread was started or the source stopped: polls skip the monitor. */
    private volatile boolean settled;

    /** A runtime for {@code config}; nothing is started. */
    public SourceRuntime(KafkaSourceConfig config) {
        this.config = config;
        this.events = new Events(config.name(), config.listeners());
        DeadLetterTopics deadLetterTopics = config.deadLetters() instanceof DeadLetterPolicy.Named named
                ? new DeadLetterTopics(config, named)
                : null;
        this.publisher = config.deadLetters() instanceof DeadLetterPolicy.Named named
                ? new DeadLetterPublisher(config, named, deadLetterTopics, events)
                : null;
        this.loop = new ConsumerLoop(config, events, deadLetterTopics, this::closePublisher);
    }

    private void closePublisher() {
        if (publisher == null) {
            return;
        }
        try {
            publisher.close();
        } catch (RuntimeException e) {
            log.warn("kafka source '{}': closing the dead-letter producer failed: {}", config.name(), e.toString());
        }
    }

    String name() {
        return config.name();
    }

    AckLedger ledger() {
        return loop.ledger();
    }

    Events events() {
        return events;
    }

    DeadLetterPublisher publisher() {
        return publisher;
    }

    void wakeConsumer() {
        loop.wakeup();
    }

    private void ensureStarted() {
        if (!settled) {
            startOnce();
        }
    }

    private synchronized void startOnce() {
        settled = true;
        if (thread == null && !stopped) {
            thread = Thread.ofPlatform().name("waymark-kafka-" + config.name()).daemon(true).start(loop::run);
        }
    }

    /**
     * The next record as an ingested message, waiting up to {@code timeout}. Once shut down, nothing
     * is handed out, and it waits up to {@code timeout} for the consumer to close.
     */
    public Optional<Ingested> poll(Duration timeout) throws InterruptedException {
        throwIfFailed();
        ensureStarted();
        long started = System.nanoTime();
        AckLedger.Handout h = loop.ledger().next(timeout);
        if (h == null) {
            if (loop.ledger().handoutClosed()) {
                // The ledger returns at once once its handout is closed, while the consumer may drain
                // for up to drainTimeout: a caller polling until isFinished() would spin meanwhile.
                long left = timeout.toNanos() - (System.nanoTime() - started);
                if (left > 0) {
                    loop.awaitFinished(Duration.ofNanos(left));
                }
            }
            throwIfFailed();
            return Optional.empty();
        }
        return Optional
                .of(Ingested.of(RecordConverter.toEnvelope(h.record(), h.attempt(), config.ordering(), h.partitionId()),
                        new KafkaAckHandle(this, h.record(), h.delivery(), h.attempt())));
    }

    private void throwIfFailed() {
        KafkaSourceException fatal = loop.fatal();
        if (fatal != null) {
            throw fatal;
        }
    }

    /** The processor's concurrency, before the first poll: what a retry holds back. */
    public void processedWith(Concurrency concurrency) {
        loop.ledger().laneKeys(LaneKeys.of(concurrency, config.ordering()));
    }

    /** Whether the consumer closed normally. */
    public boolean isFinished() {
        return loop.isFinished() && loop.fatal() == null;
    }

    /** Stops handing out records; the consumer commits and closes once handed-out ones are acknowledged. */
    public void shutdown(boolean immediately) {
        boolean neverStarted;
        synchronized (this) {
            neverStarted = thread == null && !stopped;
            stopped = true;
        }
        loop.requestStop(immediately);
        if (neverStarted) {
            loop.finishUnstarted();
        }
    }

    /** The processor acknowledges nothing more: a shutdown does not wait for acknowledgements. */
    public void processorEnded() {
        loop.processorEnded();
    }

    /** Waits for the consumer and the dead-letter producer to be closed. */
    public boolean awaitClosed(Duration timeout) throws InterruptedException {
        return loop.awaitFinished(timeout);
    }

    /** The failure that ended the source, or null. */
    public KafkaSourceException failure() {
        return loop.fatal();
    }

    /** Resumes a halted partition from the halted record. */
    public boolean resumeHalted(TopicPartition tp) {
        boolean resumed = loop.ledger().resumeHalted(tp);
        if (resumed) {
            loop.wakeup();
        }
        return resumed;
    }

    /** Halted partitions and their halted offsets. */
    public Map<TopicPartition, Long> halted() {
        return loop.ledger().halted();
    }
}
