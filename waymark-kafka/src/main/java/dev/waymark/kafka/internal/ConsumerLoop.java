package dev.waymark.kafka.internal;

import dev.waymark.kafka.KafkaSourceConfig;
import dev.waymark.kafka.KafkaSourceEvent.Kind;
import dev.waymark.kafka.KafkaSourceException;
import java.time.Duration;
import java.util.Collection;
import java.util.HashSet;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.CloseOptions.GroupMembershipOperation;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one thread that owns the {@link KafkaConsumer}. Each turn it applies what processor threads
 * asked for through the {@link AckLedger} (retry seeks, halt and retry-delay pauses, resumes),
 * commits the acknowledged prefix when the commit interval is due, and polls. Processor threads
 * never touch the consumer; they {@link #wakeup()} it, so a request never waits behind a long poll.
 */
final class ConsumerLoop {

    private static final Logger log = LoggerFactory.getLogger(ConsumerLoop.class);
    private static final long STOPPING_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    private final KafkaSourceConfig config;
    private final Events events;
    private final AckLedger ledger;
    private final Seeks seeks;
    /** Checks the dead-letter topics before records of their source topics are handed out; null without. */
    private final DeadLetterTopics deadLetterTopics;
    /** Closes what the source holds besides the consumer (the dead-letter producer). */
    private final Runnable closeResources;
    /** A dead-letter topic check that failed on assignment (inside poll), thrown once poll returns. */
    private KafkaSourceException assignmentFailure;
    private final CountDownLatch finished = new CountDownLatch(1);
    private volatile KafkaConsumer<byte[], byte[]> consumer;
    private volatile boolean stopRequested;
    private volatile boolean closeNow;
    /** The processor has ended: no acknowledgement will come, a stop need not wait for any. */
    private volatile boolean processorEnded;
    private volatile KafkaSourceException fatal;

    /**
     * @param deadLetterTopics the dead-letter topic check, or null when the policy publishes nothing
     * @param closeResources run once, after the consumer closed and before the loop counts as finished
     */
    ConsumerLoop(KafkaSourceConfig config, Events events, DeadLetterTopics deadLetterTopics, Runnable closeResources) {
        this.config = config;
        this.events = events;
        this.deadLetterTopics = deadLetterTopics;
        this.closeResources = closeResources;
        this.ledger = new AckLedger(config.polling().bufferSize(), config.polling().retryHoldBytes(), events,
                this::wakeup);
        this.seeks = new Seeks(config, events);
    }

    AckLedger ledger() {
        return ledger;
    }

    /** Interrupts a poll in progress (the only consumer method that is safe from other threads). */
    void wakeup() {
        KafkaConsumer<byte[], byte[]> c = consumer;
        if (c != null) {
            c.wakeup();
        }
    }

    /** Graceful stop: no more hand-outs; commit once handed-out messages are acknowledged (or the drain times out). */
    void requestStop(boolean immediately) {
        if (immediately) {
            closeNow = true;
        }
        stopRequested = true;
        ledger.closeHandout();
        wakeup();
    }

    /** The processor acknowledges nothing more; a stop (requested before or after) closes at once. */
    void processorEnded() {
        processorEnded = true;
        wakeup();
    }

    KafkaSourceException fatal() {
        return fatal;
    }

    boolean awaitFinished(Duration timeout) throws InterruptedException {
        return finished.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    boolean isFinished() {
        return finished.getCount() == 0;
    }

    /** Marks the loop finished without having run (a source shut down before its first poll). */
    void finishUnstarted() {
        finish();
    }

    /** Whoever sees the loop finished (awaitClosed, isFinished, close) sees nothing of the source open. */
    private void finish() {
        try {
            closeResources.run();
        } finally {
            finished.countDown();
        }
    }

    void run() {
        try {
            consumer = new KafkaConsumer<>(ClientSettings.consumer(config), new ByteArrayDeserializer(),
                    new ByteArrayDeserializer());
            if (stopRequested) {
                return;
            }
            // Before joining the group: a missing dead-letter topic fails the source with nothing
            // consumed, instead of at its first dead letter, on every member that takes the record over.
            if (deadLetterTopics != null && config.topicPattern() == null
                    && !deadLetterTopics.ensure(config.topics(), () -> stopRequested)) {
                return;
            }
            if (stopRequested) {
                return;
            }
            Rebalances rebalances = new Rebalances();
            if (config.topicPattern() != null) {
                consumer.subscribe(config.topicPattern(), rebalances);
            } else {
                consumer.subscribe(config.topics(), rebalances);
            }
            loop();
            commit(ledger.committable(), true);
        } catch (KafkaSourceException e) {
            fail(e);
        } catch (InterruptException e) {
            log.info("kafka source '{}': consumer thread interrupted; closing", config.name());
        } catch (RuntimeException | Error e) {
            fail(new KafkaSourceException("kafka source '" + config.name() + "': consumer thread failed: " + e,
                    null, -1, -1, e));
        } finally {
            ledger.closeHandout();
            closeConsumer();
            finish();
        }
    }

    private void fail(KafkaSourceException e) {
        fatal = e;
        log.error("{}", e.getMessage(), e.getCause());
        events.emit(Kind.FATAL, null, -1, e.getMessage());
    }

    private void closeConsumer() {
        KafkaConsumer<byte[], byte[]> c = consumer;
        if (c == null) {
            return;
        }
        try {
            // LEAVE_GROUP: the default leaves only as a dynamic member; a static one (group.instance.id)
            // keeps its partitions from the group until its session times out.
            GroupMembershipOperation membership = config.leaveGroupOnClose()
                    ? GroupMembershipOperation.LEAVE_GROUP
                    : GroupMembershipOperation.DEFAULT;
            c.close(CloseOptions.groupMembershipOperation(membership).withTimeout(config.brokerRetry().timeout()));
        } catch (RuntimeException e) {
            log.warn("kafka source '{}': closing the consumer failed: {}", config.name(), e.toString());
        } finally {
            consumer = null; // late acknowledgements must not wake a closed consumer
        }
    }

    private void loop() {
        long pollNanos = config.polling().pollTimeout().toNanos();
        long commitNanos = config.commits().interval().toNanos();
        long nextCommit = System.nanoTime() + commitNanos;
        long drainDeadline = 0;
        boolean draining = false;
        int pollFailures = 0;
        while (true) {
            long now = System.nanoTime();
            if (stopRequested) {
                if (!draining) {
                    draining = true;
                    drainDeadline = now + config.commits().drainTimeout().toNanos();
                }
                if (closeNow || processorEnded || ledger.outstanding() <= 0 || now - drainDeadline >= 0) {
                    if (ledger.outstanding() > 0) {
                        log.warn("kafka source '{}': closing with {} handed-out message(s) unacknowledged; they"
                                + " will be redelivered", config.name(), ledger.outstanding());
                    }
                    return;
                }
            }
            seeks.apply(consumer, ledger.takeSeeks());
            applyPauses(now, draining);
            if (now - nextCommit >= 0) {
                commit(ledger.committable(), false);
                reportLag();
                events.emit(Kind.HELD, null, ledger.heldRecords(), null);
                nextCommit = System.nanoTime() + commitNanos;
            }
            long timeout = ledger.nanosUntilRetryResume(now, Math.min(pollNanos,
                    Math.max(0, nextCommit - now)));
            if (draining) {
                timeout = Math.min(timeout, STOPPING_POLL_NANOS);
            }
            ConsumerRecords<byte[], byte[]> records;
            try {
                records = consumer.poll(Duration.ofNanos(Math.max(timeout, TimeUnit.MILLISECONDS.toNanos(1))));
                pollFailures = 0;
            } catch (WakeupException e) {
                continue; // a processor thread asked for something; the next turn applies it
            } catch (InterruptException e) {
                throw e;
            } catch (RuntimeException e) {
                pollFailures++;
                if (!Failures.retriable(e) || pollFailures >= config.brokerRetry().attempts()) {
                    throw Failures.ofPoll(config.name(), e);
                }
                log.warn("kafka source '{}': poll failed (attempt {} of {}): {}", config.name(), pollFailures,
                        config.brokerRetry().attempts(), e.toString());
                backoff(pollFailures);
                continue;
            }
            if (assignmentFailure != null) {
                throw assignmentFailure; // before any record of the newly assigned topic is handed out
            }
            if (!records.isEmpty()) {
                ledger.accept(records);
            }
        }
    }

    private void applyPauses(long now, boolean stopping) {
        Set<TopicPartition> wanted = ledger.pausedWanted(now, stopping);
        Set<TopicPartition> assignment = consumer.assignment();
        wanted.retainAll(assignment);
        Set<TopicPartition> paused = consumer.paused();
        Set<TopicPartition> toPause = new HashSet<>(wanted);
        toPause.removeAll(paused);
        Set<TopicPartition> toResume = new HashSet<>(paused);
        toResume.removeAll(wanted);
        toResume.retainAll(assignment);
        if (!toPause.isEmpty()) {
            consumer.pause(toPause);
            toPause.forEach(tp -> events.emit(Kind.PAUSED, tp, -1, null));
        }
        if (!toResume.isEmpty()) {
            consumer.resume(toResume);
            toResume.forEach(tp -> events.emit(Kind.RESUMED, tp, -1, null));
        }
    }

    /**
     * Commits synchronously with bounded retries of retriable failures. A failure that outlives the
     * budget, or a fatal one, throws: that ends the source, except on revoke (see {@link Rebalances}).
     */
    private void commit(Map<TopicPartition, OffsetAndMetadata> offsets, boolean last) {
        if (offsets.isEmpty()) {
            return;
        }
        int attempts = config.brokerRetry().attempts();
        for (int attempt = 1;; attempt++) {
            try {
                consumer.commitSync(offsets, config.brokerRetry().timeout());
                ledger.committed(offsets);
                return;
            } catch (WakeupException e) {
                attempt--; // a processor's request interrupted it; not a broker failure
            } catch (CommitFailedException | RebalanceInProgressException e) {
                // The group moved on: these partitions are revoked or being revoked. Their records
                // are redelivered to the next owner (duplicates, never loss).
                log.warn("kafka source '{}': commit refused by the group ({}); the records will be redelivered",
                        config.name(), e.toString());
                return;
            } catch (InterruptException e) {
                throw e;
            } catch (RuntimeException e) {
                events.emit(Kind.COMMIT_FAILED, null, -1, e.toString());
                if (!Failures.retriable(e) || attempt >= attempts) {
                    throw Failures.ofCommit(config.name(), offsets, attempt, e);
                }
                log.warn("kafka source '{}': {}commit failed (attempt {} of {}): {}", config.name(),
                        last ? "final " : "", attempt, attempts, e.toString());
                backoff(attempt);
            }
        }
    }

    private void backoff(int attempt) {
        Backoff.sleep(config.brokerRetry().retry(), attempt);
    }

    private void reportLag() {
        Map<TopicPartition, Long> committed = ledger.committedPositions();
        committed.forEach((tp, base) -> {
            try {
                OptionalLong fetchLag = consumer.currentLag(tp);
                if (fetchLag.isEmpty()) {
                    return;
                }
                long lag = fetchLag.getAsLong();
                if (base >= 0) {
                    lag += Math.max(0, consumer.position(tp, Duration.ZERO) - base);
                }
                events.emit(Kind.LAG, tp, lag, null);
            } catch (RuntimeException e) {
                log.debug("kafka source '{}': lag of {} unknown: {}", config.name(), tp, e.toString());
            }
        });
    }

    /** Rebalance callbacks, run on the consumer thread inside {@code poll}. */
    private final class Rebalances implements ConsumerRebalanceListener {

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            Map<TopicPartition, OffsetAndMetadata> toCommit = ledger.revoke(partitions);
            if (fatal != null) {
                toCommit = Map.of(); // closing after a failure: no further broker attempts
            }
            try {
                commit(toCommit, false);
            } catch (KafkaSourceException e) {
                // Giving the partitions up anyway: their acknowledged records come back to the next owner.
                log.warn("kafka source '{}': commit on revoke failed; records will be redelivered: {}",
                        config.name(), e.getMessage());
            }
            partitions.forEach(tp -> events.emit(Kind.REVOKED, tp, -1, null));
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            ledger.revoke(partitions);
            partitions.forEach(tp -> events.emit(Kind.LOST, tp, -1, null));
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            if (deadLetterTopics != null && assignmentFailure == null) {
                // A pattern's topics are known only now (a topic list was checked at start: no-op).
                Set<String> topics = new HashSet<>();
                partitions.forEach(tp -> topics.add(tp.topic()));
                try {
                    deadLetterTopics.ensure(topics, () -> stopRequested);
                } catch (KafkaSourceException e) {
                    assignmentFailure = e; // thrown from here, the client would wrap it into its own exception
                }
            }
            ledger.assign(partitions);
        }
    }
}
