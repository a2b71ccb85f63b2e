package dev.waymark.kafka;

import static dev.waymark.kafka.TestKafka.WAIT;
import static dev.waymark.kafka.TestKafka.bytes;
import static dev.waymark.kafka.TestKafka.offset;
import static dev.waymark.kafka.TestKafka.take;
import static dev.waymark.kafka.TestKafka.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.core.DeadLetterReason;
import dev.waymark.kafka.KafkaSourceEvent.Kind;
import dev.waymark.messaging.AckDecision;
import dev.waymark.messaging.Concurrency;
import dev.waymark.messaging.Ingested;
import dev.waymark.messaging.ProcessingApp;
import dev.waymark.messaging.ProcessorState;
import dev.waymark.testkit.KafkaExtension;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Dead letters: checklist 38 (and the cancellation case of 31). */
class KafkaDeadLetterTest {

    @RegisterExtension
    static final KafkaExtension KAFKA = new KafkaExtension();

    private final TestKafka kafka = new TestKafka(KAFKA);

    private static String header(ConsumerRecord<byte[], byte[]> r, String name) {
        Header h = r.headers().lastHeader(name);
        return h == null ? null : text(h.value());
    }

    @Test
    void a_dead_letter_is_published_with_the_original_record_and_its_reason_then_committed() throws Exception {
        String topic = KAFKA.createTopic("dl", 1);
        String dlt = KAFKA.createTopic("dl.DLT", 1);
        ProducerRecord<byte[], byte[]> bad = new ProducerRecord<>(topic, 0, bytes("order-7"), bytes("{broken"));
        bad.headers().add("traceparent", bytes("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"));
        bad.headers().add("tracestate", bytes("vendor=x"));
        bad.headers().add("x-tag", bytes("a")).add("x-tag", bytes("b"));
        kafka.produce(topic, 0, 1, 1);
        kafka.send(bad);
        kafka.produce(topic, 0, 1, 1);
        String group = kafka.group();
        RecordingListener events = new RecordingListener();
        ProcessingApp app = ProcessingApp.builder().processor("p",
                KafkaSource.of(kafka.config(group, topic).listener(events).build()), Concurrency.serial(),
                m -> KafkaCoordinates.of(m.envelope()).offset() == 1
                        ? AckDecision.deadLetter(DeadLetterReason.invalid("not JSON"))
                        : AckDecision.ok())
                .build().start();
        kafka.awaitCommittedThenStop(app, group, topic, 1);
        ConsumerRecord<byte[], byte[]> dead = kafka.readAll(dlt, 1).get(0);
        assertThat(text(dead.key())).isEqualTo("order-7");
        assertThat(text(dead.value())).isEqualTo("{broken");
        assertThat(dead.headers().toArray()).extracting(Header::key).startsWith("traceparent", "tracestate", "x-tag",
                "x-tag");
        assertThat(header(dead, "traceparent")).isEqualTo("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
        assertThat(header(dead, "tracestate")).isEqualTo("vendor=x");
        assertThat(header(dead, DeadLetterHeaders.REASON_CODE)).isEqualTo("invalid");
        assertThat(header(dead, DeadLetterHeaders.REASON)).isEqualTo("invalid payload: not JSON");
        assertThat(header(dead, DeadLetterHeaders.ATTEMPT)).isEqualTo("0");
        assertThat(header(dead, DeadLetterHeaders.ORIGINAL_TOPIC)).isEqualTo(topic);
        assertThat(header(dead, DeadLetterHeaders.ORIGINAL_PARTITION)).isEqualTo("0");
        assertThat(header(dead, DeadLetterHeaders.ORIGINAL_OFFSET)).isEqualTo("1");
        assertThat(header(dead, DeadLetterHeaders.GROUP)).isEqualTo(group);
        assertThat(header(dead, DeadLetterHeaders.ORIGINAL_TIMESTAMP)).isNotBlank();
        assertThat(events.of(Kind.DEAD_LETTERED)).singleElement().extracting(KafkaSourceEvent::value).isEqualTo(1L);
    }

    @Test
    void a_failed_dead_letter_publish_commits_nothing_and_fails_the_processor_with_the_message_id()
            throws Exception {
        String topic = KAFKA.createTopic("dl-refused", 1);
        kafka.createRefusingDeadLetterTopic(topic);
        kafka.produce(topic, 0, 3, 1);
        String group = kafka.group();
        RecordingListener events = new RecordingListener();
        KafkaSource source = KafkaSource.of(kafka.config(group, topic).listener(events)
                .brokerOperationTimeout(Duration.ofMillis(300)).build());
        ProcessingApp app = ProcessingApp.builder().processor("p", source, Concurrency.serial(),
                m -> KafkaCoordinates.of(m.envelope()).offset() == 1
                        ? AckDecision.deadLetter(DeadLetterReason.poison("bad"))
                        : AckDecision.ok())
                .build().start();
        try {
            await().atMost(WAIT).until(() -> app.snapshot().get("p").lifecycle() == ProcessorState.Lifecycle.FAILED);
            ProcessorState state = app.snapshot().get("p");
            assertThat(state.failedMessageId()).isEqualTo(topic + "-0-1");
            assertThat(state.failure()).contains("dead letter", "nothing committed", "RecordTooLarge",
                    "max.message.bytes of '" + topic + ".DLT'");
            DeadLetterTopicException failure = (DeadLetterTopicException) app.failure("p").orElseThrow().getCause();
            assertThat(failure.problem()).isEqualTo(DeadLetterTopicException.Problem.PUBLISH_FAILED);
            assertThat(failure.deadLetterTopic()).isEqualTo(topic + ".DLT");
            assertThat(failure.offset()).isOne();
            assertThat(events.of(Kind.DEAD_LETTER_FAILED)).as("each of the runtime's 4 attempts").hasSize(4)
                    .allSatisfy(e -> assertThat(e.value()).isOne());
            assertThat(events.of(Kind.DEAD_LETTERED)).isEmpty();
        } finally {
            app.stop();
            source.close();
        }
        assertThat(kafka.committed(group, topic).getOrDefault(0, 0L)).isLessThanOrEqualTo(1L);
        try (KafkaSource next = KafkaSource.of(kafka.config(group, topic).build())) {
            Ingested first = take(next);
            if (offset(first) == 0) {
                first.ack().finalize(AckDecision.ok());
                first = take(next);
            }
            assertThat(offset(first)).as("the record is still there for the next session").isEqualTo(1);
        }
    }

    @Test
    void a_dead_letter_failing_while_the_app_drains_after_stop_still_fails_the_processor() throws Exception {
        String topic = KAFKA.createTopic("dl-drain", 1);
        kafka.createRefusingDeadLetterTopic(topic);
        kafka.produce(topic, 0, 3, 1);
        String group = kafka.group();
        CountDownLatch handling = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        KafkaSource source = KafkaSource.of(kafka.config(group, topic)
                .brokerOperationTimeout(Duration.ofMillis(300)).build());
        ProcessingApp app = ProcessingApp.builder().processor("p", source, Concurrency.orderedByKey(2), m -> {
            if (KafkaCoordinates.of(m.envelope()).offset() == 1) {
                handling.countDown();
                release.await(30, TimeUnit.SECONDS);
                return AckDecision.deadLetter(DeadLetterReason.poison("late"));
            }
            return AckDecision.ok();
        }).build().start();
        try {
            assertThat(handling.await(30, TimeUnit.SECONDS)).isTrue();
            CompletableFuture<Boolean> stopped = CompletableFuture.supplyAsync(app::stop);
            await().atMost(WAIT).until(() -> app.snapshot().get("p").lifecycle() == ProcessorState.Lifecycle.DRAINING);
            release.countDown(); // the source is shutting down; this acknowledgement fails
            stopped.get(60, TimeUnit.SECONDS);
            assertThat(app.snapshot().get("p").lifecycle()).isEqualTo(ProcessorState.Lifecycle.FAILED);
            assertThat(app.snapshot().get("p").failedMessageId()).isEqualTo(topic + "-0-1");
        } finally {
            release.countDown();
            app.stop();
            source.close();
        }
        assertThat(kafka.committed(group, topic).getOrDefault(0, 0L)).isLessThanOrEqualTo(1L);
    }

    @Test
    void a_pattern_source_refuses_a_dead_letter_topic_its_own_pattern_matches_before_handling_anything()
            throws Exception {
        String topic = KAFKA.createTopic("p-a", 1);
        String dlt = KAFKA.createTopic("p-a.DLT", 1); // the default target, and matched by the pattern
        kafka.produce(topic, 0, 1, 1);
        String group = kafka.group();
        Pattern pattern = Pattern.compile(Pattern.quote(KAFKA.topic("p-")) + ".*");
        KafkaSource source = KafkaSource.of(kafka.config(group).topicPattern(pattern)
                .brokerOperationTimeout(Duration.ofMillis(300)).build());
        List<String> handled = new CopyOnWriteArrayList<>();
        ProcessingApp app = ProcessingApp.builder().processor("p", source, Concurrency.serial(), m -> {
            handled.add(m.id());
            return AckDecision.deadLetter(DeadLetterReason.poison("bad"));
        }).build().start();
        try {
            await().atMost(WAIT).until(() -> app.snapshot().get("p").lifecycle() == ProcessorState.Lifecycle.FAILED);
            ProcessorState state = app.snapshot().get("p");
            assertThat(state.failure()).contains("'" + dlt + "'", "topic pattern");
            DeadLetterTopicException failure = (DeadLetterTopicException) app.failure("p").orElseThrow().getCause();
            assertThat(failure.problem()).isEqualTo(DeadLetterTopicException.Problem.READ_BY_SOURCE);
            assertThat(failure.deadLetterTopic()).isEqualTo(dlt);
            assertThat(handled).as("refused when the topic was assigned, before any record").isEmpty();
        } finally {
            app.stop();
            source.close();
        }
        assertThat(kafka.endOffsets(dlt, 1)).containsEntry(0, 0L);
        assertThat(kafka.committed(group, topic)).doesNotContainKey(0);
    }

    @Test
    void without_a_dead_letter_topic_the_record_is_logged_and_committed() throws Exception {
        String topic = KAFKA.createTopic("dl-log", 1);
        kafka.produce(topic, 0, 3, 1);
        String group = kafka.group();
        RecordingListener events = new RecordingListener();
        ProcessingApp app = ProcessingApp.builder().processor("p", KafkaSource.of(kafka.config(group, topic)
                .deadLetters(DeadLetterPolicy.logAndCommit()).listener(events).build()), Concurrency.serial(),
                m -> KafkaCoordinates.of(m.envelope()).offset() == 1
                        ? AckDecision.deadLetter(DeadLetterReason.maxAttempts(3))
                        : AckDecision.ok())
                .build().start();
        kafka.awaitCommittedThenStop(app, group, topic, 1);
        assertThat(events.of(Kind.DEAD_LETTERED)).singleElement().extracting(KafkaSourceEvent::detail)
                .isEqualTo("max_attempts");
    }

    @Test
    void an_interrupted_dead_letter_acknowledgement_releases_the_handle_and_a_later_one_completes()
            throws Exception {
        String topic = KAFKA.createTopic("dl-cancel", 1);
        String dlt = KAFKA.createTopic("dl-cancel.DLT", 1);
        kafka.produce(topic, 0, 1, 1);
        String group = kafka.group();
        try (KafkaSource source = KafkaSource.of(kafka.config(group, topic)
                .missingDeadLetterTopic(MissingDeadLetterTopic.FAIL).build())) {
            Ingested m = take(source); // the start check found the dead-letter topic
            KAFKA.admin().deleteTopics(List.of(dlt)).all().get(30, TimeUnit.SECONDS); // gone since
            AckDecision decision = AckDecision.deadLetter(DeadLetterReason.poison("x"));
            AtomicReference<Thread> finalizer = new AtomicReference<>();
            CompletableFuture<Throwable> outcome = new CompletableFuture<>();
            Thread t = Thread.ofPlatform().start(() -> {
                finalizer.set(Thread.currentThread());
                try {
                    m.ack().finalize(decision); // blocks: the dead-letter topic does not exist now
                    outcome.complete(null);
                } catch (Throwable e) {
                    outcome.complete(e);
                }
            });
            await().atMost(WAIT).until(() -> t.getState() == Thread.State.TIMED_WAITING
                    || t.getState() == Thread.State.WAITING);
            t.interrupt();
            assertThat(outcome.get(5, TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class);
            assertThat(kafka.committed(group, topic)).doesNotContainKey(0);

            await().atMost(WAIT).ignoreExceptions().until(() -> {
                KAFKA.createTopic("dl-cancel.DLT", 1); // refused until the deletion has completed
                return true;
            });
            long started = System.nanoTime();
            m.ack().finalize(decision);
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
            await().atMost(WAIT).until(() -> kafka.fullyCommitted(group, topic, 1));
            assertThat(kafka.readAll(topic + ".DLT", 1)).hasSize(1);
        }
    }

    @Test
    void a_fenced_dead_letter_publishes_nothing() throws Exception {
        String topic = KAFKA.createTopic("dl-fenced", 1);
        kafka.produce(topic, 0, 2, 1);
        RecordingListener events = new RecordingListener();
        try (KafkaSource source = KafkaSource.of(kafka.config(kafka.group(), topic).listener(events).build())) {
            Ingested zero = take(source);
            Ingested one = take(source);
            zero.ack().finalize(AckDecision.retry(Duration.ZERO)); // supersedes 1
            one.ack().finalize(AckDecision.deadLetter(DeadLetterReason.poison("late")));
            assertThat(kafka.endOffsets(topic + ".DLT", 1)).containsEntry(0, 0L);
            assertThat(events.of(Kind.DEAD_LETTERED)).isEmpty();
            assertThat(events.of(Kind.DEAD_LETTER_FAILED)).isEmpty();
        }
    }

    @Test
    void a_dead_letter_producer_with_linger_and_a_long_request_timeout_publishes() throws Exception {
        String topic = KAFKA.createTopic("dl-linger", 1);
        String dlt = KAFKA.createTopic("dl-linger.DLT", 1);
        kafka.produce(topic, 0, 2, 1);
        String group = kafka.group();
        // linger.ms + request.timeout.ms exceed the test's 5 s broker operation timeout.
        ProcessingApp app = ProcessingApp.builder().processor("p", KafkaSource.of(kafka.config(group, topic)
                .producerProperty("linger.ms", "5").producerProperty("request.timeout.ms", "8000").build()),
                Concurrency.serial(), m -> AckDecision.deadLetter(DeadLetterReason.invalid("not JSON")))
                .build().start();
        kafka.awaitCommittedThenStop(app, group, topic, 1);
        assertThat(kafka.readAll(dlt, 2)).extracting(r -> header(r, DeadLetterHeaders.ORIGINAL_OFFSET))
                .containsExactly("0", "1");
    }
}
