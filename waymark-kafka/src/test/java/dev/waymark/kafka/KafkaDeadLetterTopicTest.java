package dev.waymark.kafka;

import static dev.waymark.kafka.TestKafka.WAIT;
import static dev.waymark.kafka.TestKafka.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.core.DeadLetterReason;
import dev.waymark.kafka.DeadLetterTopicException.Problem;
import dev.waymark.kafka.KafkaSourceEvent.Kind;
import dev.waymark.kafka.micrometer.KafkaSourceMetrics;
import dev.waymark.messaging.AckDecision;
import dev.waymark.messaging.Concurrency;
import dev.waymark.messaging.InMemorySource;
import dev.waymark.messaging.ProcessingApp;
import dev.waymark.messaging.ProcessorFailedException;
import dev.waymark.messaging.ProcessorState;
import dev.waymark.testkit.KafkaExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Dead-letter topics (issue 29, item 8) on a broker that never creates topics by itself: checked
 * (or created) at start, failed publications reported, the typed failure readable under ISOLATE,
 * and records near the size limit dead-letterable.
 */
class KafkaDeadLetterTopicTest {

    @RegisterExtension
    static final KafkaExtension KAFKA = new KafkaExtension();

    /** The broker's default max.message.bytes, which every topic here inherits unless it sets its own. */
    private static final int BROKER_LIMIT = 1_048_588;
    /** A value the default producer (max.request.size 1 MiB) just accepts: the headers a dead letter adds push it over. */
    private static final int NEAR_LIMIT = 1_048_576 - 128;

    private final TestKafka kafka = new TestKafka(KAFKA);

    private static ProcessorState.Lifecycle lifecycle(ProcessingApp app, String id) {
        return app.snapshot(id).lifecycle();
    }

    private long maxMessageBytes(String topic) throws Exception {
        Config config = KAFKA.admin().describeConfigs(List.of(new ConfigResource(ConfigResource.Type.TOPIC, topic)))
                .all().get(30, TimeUnit.SECONDS).values().iterator().next();
        return Long.parseLong(config.get("max.message.bytes").value());
    }

    private boolean exists(String topic) throws Exception {
        return KAFKA.admin().listTopics().names().get(30, TimeUnit.SECONDS).contains(topic);
    }

    @Test
    void a_missing_dead_letter_topic_fails_the_source_at_start_naming_it_and_the_remedy_before_consuming_anything()
            throws Exception {
        String topic = KAFKA.createTopic("nodlt", 1);
        kafka.produce(topic, 0, 3, 1);
        String group = kafka.group();
        RecordingListener events = new RecordingListener();
        KafkaSource source = KafkaSource.of(kafka.config(group, topic).listener(events)
                .missingDeadLetterTopic(MissingDeadLetterTopic.FAIL).build());
        InMemorySource other = new InMemorySource("other");
        long started = System.nanoTime();
        ProcessingApp app = ProcessingApp.builder()
                .processor("p", source, Concurrency.serial(), m -> AckDecision.ok())
                .processor("other", other, Concurrency.serial(), m -> AckDecision.ok())
                .build().start();
        try {
            await().atMost(WAIT).until(() -> lifecycle(app, "p") == ProcessorState.Lifecycle.FAILED);
            assertThat(Duration.ofNanos(System.nanoTime() - started)).as("at start, not at a dead letter")
                    .isLessThan(Duration.ofSeconds(10));
            ProcessorFailedException failed = app.failure("p").orElseThrow();
            DeadLetterTopicException failure = (DeadLetterTopicException) failed.getCause();
            assertThat(failure).isSameAs(source.failure().orElseThrow());
            assertThat(failure.problem()).isEqualTo(Problem.MISSING);
            assertThat(failure.deadLetterTopic()).isEqualTo(topic + ".DLT");
            assertThat(failure.topic()).isEqualTo(topic);
            assertThat(failure).hasMessageContaining("for topic(s) [" + topic + "]")
                    .hasMessageContaining(topic + ".DLT")
                    .hasMessageContaining("kafka-topics.sh --create")
                    .hasMessageContaining("missingDeadLetterTopic(MissingDeadLetterTopic.CREATE)");
            assertThat(events.of(Kind.FATAL)).singleElement()
                    .satisfies(e -> assertThat(e.detail()).contains(topic + ".DLT"));
            assertThat(events.of(Kind.ASSIGNED)).as("it never joined the group").isEmpty();
            assertThat(app.snapshot("p").received()).isZero();
            assertThat(app.snapshot("p").failure()).contains(topic + ".DLT");
            other.send("k", "still running"); // ISOLATE: the other processor goes on
            await().atMost(WAIT).until(() -> other.decisions().size() == 1);
        } finally {
            app.stop();
        }
        assertThat(kafka.committed(group, topic)).isEmpty();
        assertThat(exists(topic + ".DLT")).as("not created").isFalse();
    }

    @Test
    void under_create_the_source_creates_its_dead_letter_topic_sized_for_the_largest_record_and_dead_letters_one()
            throws Exception {
        String topic = KAFKA.createTopic("create", 1);
        kafka.send(new ProducerRecord<>(topic, 0, bytes("big"), new byte[NEAR_LIMIT]));
        kafka.send(new ProducerRecord<>(topic, 0, bytes("small"), bytes("x")));
        String group = kafka.group();
        ProcessingApp app = ProcessingApp.builder().processor("p", KafkaSource.of(kafka.config(group, topic)
                .missingDeadLetterTopic(MissingDeadLetterTopic.CREATE).build()), Concurrency.serial(),
                m -> AckDecision.deadLetter(DeadLetterReason.poison("refused"))).build().start();
        kafka.awaitCommittedThenStop(app, group, topic, 1);
        assertThat(maxMessageBytes(topic + ".DLT")).as("the source topic's limit plus the dead-letter headers")
                .isGreaterThan(BROKER_LIMIT + DeadLetterHeaders.MAX_REASON_BYTES)
                .isLessThan(BROKER_LIMIT + 8_192);
        List<ConsumerRecord<byte[], byte[]>> dead = kafka.readAll(topic + ".DLT", 2);
        assertThat(dead.get(0).value()).hasSize(NEAR_LIMIT);
        assertThat(dead.get(0).headers().lastHeader(DeadLetterHeaders.REASON).value())
                .isEqualTo(bytes("poison: refused"));
        assertThat(dead.get(1).value()).isEqualTo(bytes("x"));
    }

    @Test
    void a_record_near_max_request_size_is_dead_lettered_into_a_topic_that_accepts_it() throws Exception {
        String topic = KAFKA.createTopic("near", 1);
        String dlt = KAFKA.createTopic("near.DLT", 1,
                Map.of("max.message.bytes", Integer.toString(BROKER_LIMIT + 8_192)));
        kafka.send(new ProducerRecord<>(topic, 0, bytes("k"), new byte[NEAR_LIMIT]));
        String group = kafka.group();
        RecordingListener events = new RecordingListener();
        ProcessingApp app = ProcessingApp.builder().processor("p", KafkaSource.of(kafka.config(group, topic)
                .missingDeadLetterTopic(MissingDeadLetterTopic.FAIL).listener(events).build()), Concurrency.serial(),
                m -> AckDecision.deadLetter(DeadLetterReason.poison("x".repeat(5_000)))).build().start();
        kafka.awaitCommittedThenStop(app, group, topic, 1);
        ConsumerRecord<byte[], byte[]> dead = kafka.readAll(dlt, 1).get(0);
        assertThat(dead.value()).hasSize(NEAR_LIMIT);
        assertThat(dead.headers().lastHeader(DeadLetterHeaders.REASON).value())
                .as("a long reason is cut to its bound").hasSize(DeadLetterHeaders.MAX_REASON_BYTES);
        assertThat(TestKafka.text(dead.headers().lastHeader(DeadLetterHeaders.REASON).value())).endsWith("…");
        assertThat(events.of(Kind.DEAD_LETTER_FAILED)).isEmpty();
    }

    @Test
    void a_failed_publication_is_reported_to_the_listener_and_metrics_and_typed_under_isolate() throws Exception {
        String topic = KAFKA.createTopic("refused", 1);
        String dlt = kafka.createRefusingDeadLetterTopic(topic);
        kafka.produce(topic, 0, 2, 1);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        RecordingListener events = new RecordingListener();
        String group = kafka.group();
        InMemorySource other = new InMemorySource("other");
        ProcessingApp app = ProcessingApp.builder()
                .processor("p", KafkaSource.of(kafka.config(group, topic).listener(events)
                        .listener(new KafkaSourceMetrics(registry)).build()), Concurrency.serial(),
                        m -> KafkaCoordinates.of(m.id()).offset() == 1
                                ? AckDecision.deadLetter(DeadLetterReason.poison("x"))
                                : AckDecision.ok())
                .processor("other", other, Concurrency.serial(), m -> AckDecision.ok())
                .build().start();
        try {
            await().atMost(WAIT).until(() -> lifecycle(app, "p") == ProcessorState.Lifecycle.FAILED);
            assertThat(events.of(Kind.DEAD_LETTER_FAILED)).hasSize(4).allSatisfy(e -> {
                assertThat(e.topic()).isEqualTo(topic);
                assertThat(e.partition()).isZero();
                assertThat(e.value()).isOne();
                assertThat(e.detail()).startsWith(dlt + ": ").contains("RecordTooLargeException");
            });
            assertThat(registry.get("waymark.kafka.dead_letter_failures").tag("source", "kafka:" + topic).counter()
                    .count()).isEqualTo(4.0);
            ProcessorFailedException failed = app.failure("p").orElseThrow();
            assertThat(failed.messageId()).isEqualTo(topic + "-0-1");
            assertThat(failed.getCause()).isInstanceOfSatisfying(DeadLetterTopicException.class, e -> {
                assertThat(e.problem()).isEqualTo(Problem.PUBLISH_FAILED);
                assertThat(e.deadLetterTopic()).isEqualTo(dlt);
                assertThat(e.topic()).isEqualTo(topic);
                assertThat(e.partition()).isZero();
                assertThat(e.offset()).isOne();
                assertThat(e).hasMessageContaining("max.message.bytes of '" + dlt + "'");
            });
            assertThat(app.failure("other")).isEmpty();
            assertThat(lifecycle(app, "other")).isEqualTo(ProcessorState.Lifecycle.RUNNING);
        } finally {
            app.stop();
        }
        assertThat(kafka.committed(group, topic).getOrDefault(0, 0L)).isLessThanOrEqualTo(1L);
    }

    @Test
    void a_pattern_source_checks_the_dead_letter_topic_of_each_topic_when_it_is_assigned() throws Exception {
        String created = KAFKA.createTopic("pat-create-a", 1);
        kafka.produce(created, 0, 1, 1);
        String prefix = KAFKA.topic("pat-create-");
        String group = kafka.group();
        KafkaSource creating = KafkaSource.of(kafka.config(group).topicPattern(Pattern.compile(Pattern.quote(prefix)
                + "[^.]*")).missingDeadLetterTopic(MissingDeadLetterTopic.CREATE).build());
        ProcessingApp app = ProcessingApp.builder().processor("p", creating, Concurrency.serial(),
                m -> AckDecision.deadLetter(DeadLetterReason.poison("x"))).build().start();
        kafka.awaitCommittedThenStop(app, group, created, 1);
        assertThat(kafka.readAll(created + ".DLT", 1)).hasSize(1);

        String missing = KAFKA.createTopic("pat-fail-a", 1);
        kafka.produce(missing, 0, 1, 1);
        String failGroup = kafka.group();
        KafkaSource failing = KafkaSource.of(kafka.config(failGroup).topicPattern(Pattern.compile(
                Pattern.quote(KAFKA.topic("pat-fail-")) + "[^.]*")).missingDeadLetterTopic(MissingDeadLetterTopic.FAIL)
                .build());
        ProcessingApp failingApp = ProcessingApp.builder().processor("p", failing, Concurrency.serial(),
                m -> AckDecision.ok()).build().start();
        try {
            await().atMost(WAIT).until(() -> lifecycle(failingApp, "p") == ProcessorState.Lifecycle.FAILED);
            DeadLetterTopicException failure = (DeadLetterTopicException) failingApp.failure("p").orElseThrow()
                    .getCause();
            assertThat(failure.problem()).isEqualTo(Problem.MISSING);
            assertThat(failure.deadLetterTopic()).isEqualTo(missing + ".DLT");
            assertThat(failingApp.snapshot("p").received()).as("refused on assignment, before any record").isZero();
        } finally {
            failingApp.stop();
        }
        assertThat(kafka.committed(failGroup, missing)).isEmpty();
    }
}
