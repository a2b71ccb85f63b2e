package dev.waymark.kafka;

import static dev.waymark.kafka.TestKafka.WAIT;
import static dev.waymark.kafka.TestKafka.offset;
import static dev.waymark.kafka.TestKafka.take;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.kafka.KafkaSourceEvent.Kind;
import dev.waymark.messaging.AckDecision;
import dev.waymark.messaging.Concurrency;
import dev.waymark.messaging.Ingested;
import dev.waymark.messaging.ProcessingApp;
import dev.waymark.messaging.ProcessorState;
import dev.waymark.testkit.KafkaExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.LongStream;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Retries on a real broker: checklist 15-17 and 21-24. */
class KafkaRetryTest {

    @RegisterExtension
    static final KafkaExtension KAFKA = new KafkaExtension();

    private final TestKafka kafka = new TestKafka(KAFKA);

    private static List<Long> range(long from, long toExclusive) {
        return LongStream.range(from, toExclusive).boxed().toList();
    }

    @Test
    void a_retry_is_redelivered_in_the_same_session_and_nothing_is_committed_past_it_before_the_replay()
            throws Exception {
        String topic = KAFKA.createTopic("retry-same-session", 1);
        kafka.produce(topic, 0, 5, 1);
        String group = kafka.group();
        List<Long> seen = new CopyOnWriteArrayList<>();
        List<Long> committedAtReplay = new CopyOnWriteArrayList<>();
        KafkaSource source = KafkaSource.of(kafka.config(group, topic).build());
        ProcessingApp app = ProcessingApp.builder().processor("p", source, Concurrency.serial(), m -> {
            long offset = KafkaCoordinates.of(m.envelope()).offset();
            seen.add(offset);
            if (offset == 2 && m.envelope().attempt() == 0) {
                return AckDecision.retry(Duration.ofMillis(300));
            }
            if (offset == 2) {
                committedAtReplay.add(kafka.committed(group, topic).getOrDefault(0, 0L));
            }
            return AckDecision.ok();
        }).build().start();
        kafka.awaitCommittedThenStop(app, group, topic, 1);
        assertThat(seen).containsExactly(0L, 1L, 2L, 2L, 3L, 4L);
        assertThat(committedAtReplay).singleElement().satisfies(c -> assertThat(c).isLessThanOrEqualTo(2L));
        assertThat(kafka.committed(group, topic)).containsEntry(0, 5L);
    }

    @Test
    void a_retried_record_not_replayed_before_the_session_ends_is_redelivered_by_the_next_session()
            throws Exception {
        String topic = KAFKA.createTopic("retry-restart", 1);
        kafka.produce(topic, 0, 3, 1);
        String group = kafka.group();
        RecordingListener events = new RecordingListener();
        try (KafkaSource first = KafkaSource.of(kafka.config(group, topic).listener(events).build())) {
            take(first).ack().finalize(AckDecision.ok());
            Ingested one = take(first);
            assertThat(offset(one)).isEqualTo(1);
            one.ack().finalize(AckDecision.retry(Duration.ofMinutes(1)));
            await().atMost(WAIT).until(() -> kafka.committed(group, topic).getOrDefault(0, -1L) == 1L);
        }
        assertThat(kafka.committed(group, topic)).containsEntry(0, 1L);
        try (KafkaSource second = KafkaSource.of(kafka.config(group, topic).build())) {
            Ingested again = take(second);
            assertThat(offset(again)).isEqualTo(1);
            assertThat(again.envelope().attempt()).as("attempts restart with the session").isZero();
        }
    }

    @Test
    void an_ok_after_a_retry_on_the_same_handle_does_nothing_and_a_repeated_retry_holds_once() throws Exception {
        String topic = KAFKA.createTopic("retry-handle", 1);
        kafka.produce(topic, 0, 2, 1);
        String group = kafka.group();
        RecordingListener events = new RecordingListener();
        try (KafkaSource source = KafkaSource.of(kafka.config(group, topic).listener(events).build())) {
            Ingested zero = take(source);
            zero.ack().finalize(AckDecision.retry(Duration.ofMillis(200)));
            zero.ack().finalize(AckDecision.retry(Duration.ofMillis(200)));
            zero.ack().finalize(AckDecision.ok()); // the retrying delivery cannot resolve its own retry
            await().atMost(WAIT).until(() -> events.count(Kind.RETRY_HELD) == 1);
            Ingested replay = take(source);
            assertThat(offset(replay)).isZero();
            assertThat(replay.envelope().attempt()).isEqualTo(1);
            assertThat(kafka.committed(group, topic)).as("nothing committed before the replay").doesNotContainKey(0);
            replay.ack().finalize(AckDecision.ok());
            replay.ack().finalize(AckDecision.ok()); // harmless
            Ingested one = take(source);
            one.ack().finalize(AckDecision.ok());
            await().atMost(WAIT).until(() -> kafka.fullyCommitted(group, topic, 1));
            assertThat(events.of(Kind.RETRY_HELD)).hasSize(1);
            assertThat(events.of(Kind.SEEK)).as("redelivered from memory").isEmpty();
        }
    }

    @Test
    void a_handler_exception_leads_to_redelivery_never_a_skip() throws Exception {
        String topic = KAFKA.createTopic("retry-exception", 1);
        kafka.produce(topic, 0, 5, 1);
        String group = kafka.group();
        List<Long> seen = new CopyOnWriteArrayList<>();
        AtomicBoolean thrown = new AtomicBoolean();
        ProcessingApp app = ProcessingApp.builder().processor("p", KafkaSource.of(kafka.config(group, topic).build()),
                Concurrency.serial(), m -> {
                    long offset = KafkaCoordinates.of(m.envelope()).offset();
                    seen.add(offset);
                    if (offset == 2 && thrown.compareAndSet(false, true)) {
                        throw new IllegalStateException("boom");
                    }
                    return AckDecision.ok();
                }).build().start();
        kafka.awaitCommittedThenStop(app, group, topic, 1);
        assertThat(seen).containsExactly(0L, 1L, 2L, 2L, 3L, 4L);
    }

    @Test
    void a_record_whose_handler_always_throws_is_retried_about_once_a_second_and_makes_the_processor_unhealthy()
            throws Exception {
        String topic = KAFKA.createTopic("retry-poison", 1);
        kafka.produce(topic, 0, 3, 1);
        String group = kafka.group();
        // Fetches answer at once, as on a busy partition: a seek back is refetched without waiting.
        KafkaSource source = KafkaSource.of(kafka.config(group, topic)
                .consumerProperty(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "1").build());
        ProcessingApp app = ProcessingApp.builder().processor("p", source, Concurrency.serial(), m -> {
            if (KafkaCoordinates.of(m.envelope()).offset() == 1) {
                throw new IllegalStateException("poison");
            }
            return AckDecision.ok();
        }).build().start();
        long started = System.nanoTime();
        try {
            Duration window = Duration.ofMillis(1_500); // longer than the default retry delay of 1 s
            await().atMost(WAIT).pollInterval(Duration.ofMillis(100)).until(() -> !app.isHealthy(window));
            long elapsedSeconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started);
            ProcessorState state = app.snapshot().get("p");
            assertThat(state.lifecycle()).isEqualTo(ProcessorState.Lifecycle.RUNNING);
            assertThat(state.retried()).as("retried at the default delay, not in a tight loop")
                    .isBetween(2L, elapsedSeconds + 2);
            assertThat(kafka.committed(group, topic)).containsEntry(0, 1L);
        } finally {
            app.stop();
            source.close();
        }
    }

    @Test
    void two_buffered_records_both_retried_are_replayed_in_their_original_order_and_both_committed()
            throws Exception {
        String topic = KAFKA.createTopic("retry-two-buffered", 1);
        kafka.produce(topic, 0, 2, 1);
        String group = kafka.group();
        try (KafkaSource source = KafkaSource.of(kafka.config(group, topic).build())) {
            Ingested zero = take(source);
            Ingested one = take(source);
            one.ack().finalize(AckDecision.retry(Duration.ZERO)); // the later retry first
            zero.ack().finalize(AckDecision.retry(Duration.ZERO));
            Ingested replay0 = take(source);
            Ingested replay1 = take(source);
            assertThat(List.of(offset(replay0), offset(replay1))).containsExactly(0L, 1L);
            assertThat(replay0.envelope().attempt()).isEqualTo(1);
            replay0.ack().finalize(AckDecision.ok());
            replay1.ack().finalize(AckDecision.ok());
            await().atMost(WAIT).until(() -> kafka.fullyCommitted(group, topic, 1));
            assertThat(TestKafka.drain(source, Duration.ofMillis(300))).as("nothing left over").isEmpty();
        }
    }

    /** Offsets handed to the handler, in order, and the processor's processed count. */
    private record Run(List<Long> seen, long processed) {}

    /** Handles {@code topic} with {@code source}, retrying offset 20 once. */
    private Run retryingTwentyOnce(KafkaSource source, Concurrency concurrency, String group, String topic)
            throws Exception {
        List<Long> seen = new CopyOnWriteArrayList<>();
        AtomicBoolean retried = new AtomicBoolean();
        ProcessingApp app = ProcessingApp.builder().processor("p", source, concurrency, m -> {
            long offset = KafkaCoordinates.of(m.envelope()).offset();
            seen.add(offset);
            return offset == 20 && retried.compareAndSet(false, true)
                    ? AckDecision.retry(Duration.ZERO)
                    : AckDecision.ok();
        }).build().start();
        kafka.awaitCommittedThenStop(app, group, topic, 1);
        return new Run(seen, app.snapshot().get("p").processed());
    }

    @Test
    void no_stall_after_a_buffered_retry_commits_reach_the_end_in_the_same_session() throws Exception {
        String topic = KAFKA.createTopic("retry-no-stall", 1);
        kafka.produce(topic, 0, 50, 4);
        String group = kafka.group();
        List<Long> seen = retryingTwentyOnce(KafkaSource.of(kafka.config(group, topic).build()),
                Concurrency.orderedByKey(4), group, topic).seen();
        assertThat(kafka.committed(group, topic)).containsEntry(0, 50L);
        assertThat(seen).containsAll(range(0, 50));
        assertThat(seen.stream().filter(o -> o == 20L).count()).isEqualTo(2);
    }

    @Test
    void no_successor_is_handled_before_its_retried_record_and_superseded_deliveries_are_skipped()
            throws Exception {
        String topic = KAFKA.createTopic("retry-order", 1);
        kafka.produce(topic, 0, 50, 4);
        String group = kafka.group();
        // Big polls: the successors of 20 are certainly buffered when it is retried.
        Run run = retryingTwentyOnce(KafkaSource.of(kafka.config(group, topic).maxPollRecords(100).build()),
                Concurrency.serial(), group, topic);
        List<Long> expected = new ArrayList<>(range(0, 21));
        expected.addAll(range(20, 50));
        assertThat(run.seen()).containsExactlyElementsOf(expected);
        assertThat(run.processed()).as("no counter for superseded deliveries").isEqualTo(51);
    }

    @Test
    void ordered_by_partition_no_successor_is_handled_before_its_retried_record() throws Exception {
        String topic = KAFKA.createTopic("retry-order-keyed", 1);
        kafka.produce(topic, 0, 50, 4);
        String group = kafka.group();
        // Concurrent processing, one partition in order: the successors of 20 already sit in the
        // runtime's inbox when 20 is retried; they are skipped as superseded and come again after it.
        Run run = retryingTwentyOnce(KafkaSource.of(kafka.config(group, topic).maxPollRecords(100)
                .ordering(KafkaOrdering.PARTITION).build()), Concurrency.orderedByKey(4), group, topic);
        List<Long> expected = new ArrayList<>(range(0, 21));
        expected.addAll(range(20, 50));
        assertThat(run.seen()).containsExactlyElementsOf(expected);
    }

    @Test
    void unordered_acknowledgements_with_random_delays_and_retries_never_commit_past_an_unfinished_record()
            throws Exception {
        String topic = KAFKA.createTopic("retry-unordered", 4);
        kafka.produce(topic, -1, 2_000, 97);
        String group = kafka.group();
        Set<String> ok = ConcurrentHashMap.newKeySet();
        List<String> skipped = new CopyOnWriteArrayList<>();
        ProcessingApp app = ProcessingApp.builder().processor("p", KafkaSource.of(kafka.config(group, topic).build()),
                Concurrency.unordered(16), m -> {
                    LockSupport.parkNanos(ThreadLocalRandom.current().nextLong(2_000_000)); // 0-2 ms of work
                    if (m.envelope().attempt() == 0 && Math.floorMod(m.id().hashCode(), 50) == 0) {
                        return AckDecision.retry(Duration.ZERO); // 2% retried once
                    }
                    ok.add(m.id());
                    return AckDecision.ok();
                }).build().start();
        try {
            await().atMost(WAIT).until(() -> {
                // Whatever is committed must be a prefix of what was handled with ok.
                kafka.committed(group, topic).forEach((partition, committed) -> {
                    for (long o = 0; o < committed; o++) {
                        String id = topic + "-" + partition + "-" + o;
                        if (!ok.contains(id)) {
                            skipped.add(id + " (committed " + committed + ")");
                        }
                    }
                });
                return kafka.fullyCommitted(group, topic, 4);
            });
        } finally {
            app.stop();
        }
        assertThat(skipped).isEmpty();
        assertThat(ok).hasSize(2_000);
    }

    @Test
    void a_retried_offset_removed_by_retention_clears_the_barrier_and_other_partitions_go_on() throws Exception {
        retriedOffsetRemovedByRetention("retry-retention", "earliest");
    }

    @Test
    void with_auto_offset_reset_latest_a_retried_offset_removed_by_retention_resumes_at_the_log_start()
            throws Exception {
        retriedOffsetRemovedByRetention("retry-retention-latest", "latest");
    }

    /**
     * The group starts from committed offsets 0, so the reset policy matters only for the seek to
     * the deleted offset 4: the consumer's own reset would go to the log end under {@code latest}.
     */
    private void retriedOffsetRemovedByRetention(String name, String autoOffsetReset) throws Exception {
        String topic = KAFKA.createTopic(name, 2);
        kafka.produce(topic, 0, 10, 1);
        kafka.produce(topic, 1, 10, 1);
        String group = kafka.group();
        KAFKA.admin().alterConsumerGroupOffsets(group, Map.of(new TopicPartition(topic, 0), new OffsetAndMetadata(0),
                new TopicPartition(topic, 1), new OffsetAndMetadata(0))).all().get(30, TimeUnit.SECONDS);
        RecordingListener events = new RecordingListener();
        List<String> seen = new CopyOnWriteArrayList<>();
        AtomicBoolean deleted = new AtomicBoolean();
        // No retry hold: the retry seeks back (as past the budget), and the seek meets the deleted offset.
        ProcessingApp app = ProcessingApp.builder().processor("p", KafkaSource.of(kafka.config(group, topic)
                .retryHoldBytes(0)
                .consumerProperty(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, autoOffsetReset).listener(events).build()),
                Concurrency.serial(), m -> {
                    KafkaCoordinates at = KafkaCoordinates.of(m.envelope());
                    seen.add(at.partition() + ":" + at.offset());
                    if (at.partition() == 0 && at.offset() == 4 && deleted.compareAndSet(false, true)) {
                        KAFKA.admin()
                                .deleteRecords(Map.of(new TopicPartition(topic, 0), RecordsToDelete.beforeOffset(7)))
                                .all().get(30, TimeUnit.SECONDS);
                        return AckDecision.retry(Duration.ofMillis(200));
                    }
                    return AckDecision.ok();
                }).build().start();
        kafka.awaitCommittedThenStop(app, group, topic, 2);
        assertThat(events.of(Kind.RETENTION_GAP)).singleElement().satisfies(e -> {
            assertThat(e.partition()).isZero();
            assertThat(e.value()).isEqualTo(7L);
        });
        assertThat(seen).contains("0:0", "0:7", "0:8", "0:9", "1:0", "1:9").doesNotContain("0:5", "0:6");
        assertThat(seen.stream().filter("0:4"::equals).count()).isEqualTo(1);
    }

    @Test
    void after_a_retry_under_unordered_concurrency_shutdown_does_not_wait_for_superseded_deliveries()
            throws Exception {
        String topic = KAFKA.createTopic("retry-drain", 1);
        kafka.produce(topic, 0, 50, 1);
        String group = kafka.group();
        Duration drainTimeout = Duration.ofSeconds(20);
        KafkaSource source = KafkaSource.of(kafka.config(group, topic).drainTimeout(drainTimeout).build());
        AtomicReference<ProcessingApp> running = new AtomicReference<>();
        CountDownLatch retried = new CountDownLatch(1);
        ProcessingApp app = ProcessingApp.builder()
                .listener((id, m, decision, nanos, error) -> {
                    if (decision instanceof AckDecision.Retry) {
                        retried.countDown();
                    }
                })
                .processor("p", source, Concurrency.unordered(4), m -> {
                    long offset = KafkaCoordinates.of(m.envelope()).offset();
                    if (offset == 5 && m.envelope().attempt() == 0) {
                        // all 50 are handed out (in the inbox) when the retry supersedes 6-49
                        await().atMost(WAIT).until(() -> running.get().snapshot().get("p").received() >= 50);
                        return AckDecision.retry(Duration.ZERO);
                    }
                    if (offset > 5) {
                        retried.await(WAIT.toMillis(), TimeUnit.MILLISECONDS); // 9-49 start only once superseded
                    }
                    return AckDecision.ok();
                }).build();
        running.set(app);
        app.start();
        await().atMost(WAIT).until(() -> kafka.fullyCommitted(group, topic, 1));
        long started = System.nanoTime();
        assertThat(app.stop()).isTrue();
        assertThat(source.awaitClosed(WAIT)).isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - started)).as("well under the drain timeout of %s", drainTimeout)
                .isLessThan(Duration.ofSeconds(3));
        assertThat(app.snapshot().get("p").retried()).isOne();
    }
}
