package dev.waymark.kafka;

import static dev.waymark.kafka.TestKafka.WAIT;
import static dev.waymark.kafka.TestKafka.bytes;
import static dev.waymark.kafka.TestKafka.offset;
import static dev.waymark.kafka.TestKafka.take;
import static dev.waymark.kafka.TestKafka.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.kafka.KafkaSourceEvent.Kind;
import dev.waymark.messaging.AckDecision;
import dev.waymark.messaging.Concurrency;
import dev.waymark.messaging.Envelope;
import dev.waymark.messaging.Ingested;
import dev.waymark.messaging.ProcessingApp;
import dev.waymark.messaging.ProcessorState;
import dev.waymark.testkit.KafkaExtension;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Consuming, committing, shutting down and caught-up latency: checklist 12-14 and 34. */
class KafkaSourceBasicsTest {

    @RegisterExtension
    static final KafkaExtension KAFKA = new KafkaExtension();

    private final TestKafka kafka = new TestKafka(KAFKA);

    @Test
    void five_records_arrive_in_order_with_id_cursor_key_and_headers() throws Exception {
        String topic = KAFKA.createTopic("basic", 1);
        ProducerRecord<byte[], byte[]> withHeaders = new ProducerRecord<>(topic, 0, bytes("k0"), bytes("v0"));
        withHeaders.headers().add("traceparent", bytes("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"));
        withHeaders.headers().add("x-tag", bytes("a")).add("x-tag", bytes("b"));
        kafka.send(withHeaders);
        kafka.produce(topic, 0, 4, 4);
        try (KafkaSource source = KafkaSource.of(kafka.config(kafka.group(), topic).build())) {
            List<Envelope> got = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                Ingested m = take(source);
                got.add(m.envelope());
                m.ack().finalize(AckDecision.ok());
            }
            assertThat(got).extracting(Envelope::messageId).containsExactly(topic + "-0-0", topic + "-0-1",
                    topic + "-0-2", topic + "-0-3", topic + "-0-4");
            assertThat(got).extracting(Envelope::cursor).containsExactly("0", "1", "2", "3", "4");
            assertThat(got).extracting(e -> text(e.payload())).containsExactly("v0", "v0", "v1", "v2", "v3");
            assertThat(got.get(0).key().asUtf8()).isEqualTo("k0");
            assertThat(got.get(0).traceparent()).startsWith("00-0af7");
            assertThat(got.get(0).headers()).extracting(Envelope.Header::name)
                    .containsExactly("traceparent", "x-tag", "x-tag");
            assertThat(got.get(0).eventTime()).isNotNull();
            assertThat(got).allSatisfy(e -> assertThat(e.attempt()).isZero());
        }
    }

    @Test
    void keyed_records_spread_over_partitions_and_all_arrive() throws Exception {
        String topic = KAFKA.createTopic("keyed", 3);
        kafka.produce(topic, -1, 30, 30);
        try (KafkaSource source = KafkaSource.of(kafka.config(kafka.group(), topic).build())) {
            List<KafkaCoordinates> got = new ArrayList<>();
            for (int i = 0; i < 30; i++) {
                Ingested m = take(source);
                got.add(KafkaCoordinates.of(m.envelope()));
                m.ack().finalize(AckDecision.ok());
            }
            assertThat(got.stream().map(KafkaCoordinates::partition).distinct().count()).isGreaterThanOrEqualTo(2);
            assertThat(got).doesNotHaveDuplicates();
        }
    }

    @Test
    void a_topic_pattern_subscribes_to_every_matching_topic() throws Exception {
        String first = KAFKA.createTopic("pattern-a", 1);
        String second = KAFKA.createTopic("pattern-b", 1);
        KAFKA.createTopic("other", 1);
        kafka.produce(first, 0, 2, 1);
        kafka.produce(second, 0, 2, 1);
        String prefix = first.substring(0, first.length() - 1);
        try (KafkaSource source = KafkaSource.of(KafkaSourceConfig.builder(KAFKA.bootstrapServers(), kafka.group())
                .topicPattern(java.util.regex.Pattern.compile(java.util.regex.Pattern.quote(prefix) + "[^.]*"))
                .missingDeadLetterTopic(MissingDeadLetterTopic.CREATE)
                .pollTimeout(Duration.ofMillis(100)).build())) {
            List<String> topics = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                Ingested m = take(source);
                topics.add(KafkaCoordinates.of(m.envelope()).topic());
                m.ack().finalize(AckDecision.ok());
            }
            assertThat(topics).containsOnly(first, second).hasSize(4);
        }
    }

    @Test
    void a_batch_of_twenty_is_fully_delivered_across_small_polls() throws Exception {
        String topic = KAFKA.createTopic("batch", 1);
        kafka.produce(topic, 0, 20, 1);
        String group = kafka.group();
        List<String> payloads = new CopyOnWriteArrayList<>();
        ProcessingApp app = ProcessingApp.builder().processor("p",
                KafkaSource.of(kafka.config(group, topic).maxPollRecords(3).bufferSize(6).build()),
                Concurrency.unordered(4), m -> {
                    payloads.add(text(m.payload()));
                    return AckDecision.ok();
                }).build().start();
        kafka.awaitCommittedThenStop(app, group, topic, 1);
        assertThat(payloads).hasSize(20).doesNotHaveDuplicates();
    }

    @Test
    void acknowledged_offsets_are_committed_and_a_new_consumer_in_the_group_reads_nothing() throws Exception {
        String topic = KAFKA.createTopic("commit", 2);
        kafka.produce(topic, 0, 3, 1);
        kafka.produce(topic, 1, 3, 1);
        String group = kafka.group();
        try (KafkaSource source = KafkaSource.of(kafka.config(group, topic).build())) {
            for (int i = 0; i < 6; i++) {
                take(source).ack().finalize(AckDecision.ok());
            }
        }
        assertThat(kafka.committed(group, topic)).containsEntry(0, 3L).containsEntry(1, 3L);
        // A sentinel after the committed records of each partition: the new consumer has read once it
        // has both, and anything committed would have come before them.
        kafka.produce(topic, 0, 1, 1);
        kafka.produce(topic, 1, 1, 1);
        try (KafkaSource again = KafkaSource.of(kafka.config(group, topic).build())) {
            List<KafkaCoordinates> got = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                Ingested m = take(again);
                got.add(KafkaCoordinates.of(m.envelope()));
                m.ack().finalize(AckDecision.ok());
            }
            assertThat(got).as("only the sentinels").containsExactlyInAnyOrder(new KafkaCoordinates(topic, 0, 3),
                    new KafkaCoordinates(topic, 1, 3));
        }
    }

    @Test
    void graceful_shutdown_after_some_records_commits_them_and_finishes() throws Exception {
        String topic = KAFKA.createTopic("shutdown", 1);
        kafka.produce(topic, 0, 10, 1);
        String group = kafka.group();
        KafkaSource source = KafkaSource.of(kafka.config(group, topic).build());
        for (int i = 0; i < 3; i++) {
            take(source).ack().finalize(AckDecision.ok());
        }
        source.shutdown();
        await().atMost(Duration.ofSeconds(3)).until(source::isFinished);
        assertThat(source.failure()).isEmpty();
        assertThat(kafka.committed(group, topic)).containsEntry(0, 3L);
    }

    @Test
    void idle_shutdown_is_prompt_and_repeated_shutdown_is_harmless() throws Exception {
        String topic = KAFKA.createTopic("idle", 1);
        KafkaSource source = KafkaSource.of(kafka.config(kafka.group(), topic).pollTimeout(Duration.ofSeconds(5))
                .build());
        assertThat(source.poll(Duration.ofMillis(500))).isEmpty();
        long started = System.nanoTime();
        source.shutdown();
        await().atMost(Duration.ofSeconds(3)).until(source::isFinished);
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(3));
        source.shutdown();
        source.close();
        assertThat(source.isFinished()).isTrue();
        assertThat(source.poll(Duration.ofMillis(10))).isEmpty();

        KafkaSource neverPolled = KafkaSource.of(kafka.config(kafka.group(), topic).build());
        neverPolled.shutdown();
        assertThat(neverPolled.isFinished()).isTrue();
    }

    @Test
    void acknowledgements_arriving_during_the_drain_are_committed_before_the_consumer_closes() throws Exception {
        String topic = KAFKA.createTopic("drain", 1);
        kafka.produce(topic, 0, 10, 1);
        String group = kafka.group();
        KafkaSource source = KafkaSource.of(kafka.config(group, topic).build());
        List<Ingested> taken = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            taken.add(take(source));
        }
        source.shutdown();
        assertThat(source.poll(Duration.ofMillis(200))).as("nothing handed out after shutdown").isEmpty();
        assertThat(source.isFinished()).as("waits for the outstanding acknowledgements").isFalse();
        for (Ingested m : taken) {
            m.ack().finalize(AckDecision.ok());
        }
        await().atMost(Duration.ofSeconds(5)).until(source::isFinished);
        assertThat(kafka.committed(group, topic)).containsEntry(0, 3L);
    }

    /**
     * The time bounds are loose (the machine is shared and noisy) but far below the 30 s poll timeout: a
     * consumer that handed out or committed only when an idle poll ends would miss every one of them.
     */
    @Test
    void a_caught_up_consumer_handles_and_commits_promptly_and_idles_cheaply() throws Exception {
        String topic = KAFKA.createTopic("latency", 1);
        String group = kafka.group();
        RecordingListener events = new RecordingListener();
        List<Long> latencies = new CopyOnWriteArrayList<>();
        KafkaSource source = KafkaSource.of(kafka.config(group, topic).pollTimeout(Duration.ofSeconds(30))
                .commitInterval(Duration.ofMillis(200)).listener(events).build());
        ProcessingApp app = ProcessingApp.builder().processor("p", source, Concurrency.serial(), m -> {
            latencies.add(System.currentTimeMillis() - m.envelope().eventTime().toEpochMilli());
            return AckDecision.ok();
        }).build().start();
        try (var producer = kafka.producer()) {
            await().atMost(WAIT).until(() -> events.count(Kind.ASSIGNED) > 0);
            for (int i = 0; i < 50; i++) {
                producer.send(new ProducerRecord<>(topic, 0, null, bytes("v" + i)));
            }
            producer.flush();
            await().atMost(Duration.ofSeconds(10)).until(() -> latencies.size() == 50);
            await().atMost(Duration.ofSeconds(10)).until(() -> kafka.fullyCommitted(group, topic, 1));

            latencies.clear();
            for (int i = 0; i < 40; i++) { // 20 msg/s for 2 s
                producer.send(new ProducerRecord<>(topic, 0, null, bytes("w" + i)));
                producer.flush();
                TimeUnit.MILLISECONDS.sleep(50); // pacing the producer, not waiting for a condition
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> latencies.size() == 40);
            double mean = latencies.stream().mapToLong(Long::longValue).average().orElseThrow();
            assertThat(mean).as("mean latency ms at 20 msg/s").isLessThan(1_000);

            // CPU time the thread used, not wall time, so a busy machine barely moves it: about 0.7 % here
            // under load, against 8.6 % for a loop of 1 ms polls and 39 % for one of zero-timeout polls.
            ThreadMXBean threads = ManagementFactory.getThreadMXBean();
            long consumerThread = Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> t.getName().equals("waymark-kafka-" + source.name())).findFirst().orElseThrow()
                    .threadId();
            long cpuBefore = threads.getThreadCpuTime(consumerThread);
            long wallBefore = System.nanoTime();
            TimeUnit.SECONDS.sleep(2); // measuring idle CPU over a fixed window
            long cpu = threads.getThreadCpuTime(consumerThread) - cpuBefore;
            long wall = System.nanoTime() - wallBefore;
            assertThat((double) cpu / wall).as("idle CPU share of the consumer thread").isLessThan(0.05);
        } finally {
            app.stop();
        }
    }

    @Test
    void a_serial_handler_that_leaves_its_thread_interrupted_does_not_end_the_processor() throws Exception {
        String topic = KAFKA.createTopic("stray-interrupt", 1);
        kafka.produce(topic, 0, 5, 1);
        String group = kafka.group();
        List<Long> seen = new CopyOnWriteArrayList<>();
        ProcessingApp app = ProcessingApp.builder().processor("p", KafkaSource.of(kafka.config(group, topic).build()),
                Concurrency.serial(), m -> {
                    long offset = KafkaCoordinates.of(m.envelope()).offset();
                    seen.add(offset);
                    if (offset == 0) {
                        Thread.currentThread().interrupt(); // "restore the interrupt" after catching one
                    }
                    return AckDecision.ok();
                }).build().start();
        try {
            await().atMost(WAIT).until(() -> seen.size() == 5 || lifecycle(app) != ProcessorState.Lifecycle.RUNNING);
            assertThat(lifecycle(app)).isEqualTo(ProcessorState.Lifecycle.RUNNING);
            assertThat(seen).containsExactly(0L, 1L, 2L, 3L, 4L);
            await().atMost(WAIT).until(() -> kafka.fullyCommitted(group, topic, 1));
            assertThat(app.isHealthy()).isTrue();
        } finally {
            app.stop();
        }
    }

    private static ProcessorState.Lifecycle lifecycle(ProcessingApp app) {
        return app.snapshot().get("p").lifecycle();
    }

    @Test
    void a_listener_that_throws_a_linkage_error_does_not_fail_the_source() throws Exception {
        String topic = KAFKA.createTopic("listener-error", 1);
        kafka.produce(topic, 0, 3, 1);
        String group = kafka.group();
        try (KafkaSource source = KafkaSource.of(kafka.config(group, topic).listener(e -> {
            throw new NoClassDefFoundError("io/micrometer/core/instrument/Gauge"); // optional library missing
        }).build())) {
            for (long expected = 0; expected < 3; expected++) {
                Ingested m = take(source);
                assertThat(offset(m)).isEqualTo(expected);
                m.ack().finalize(AckDecision.ok());
            }
            await().atMost(WAIT).until(() -> kafka.fullyCommitted(group, topic, 1));
            assertThat(source.failure()).isEmpty();
        }
    }
}
