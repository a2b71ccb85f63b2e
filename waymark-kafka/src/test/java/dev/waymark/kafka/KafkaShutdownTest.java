package dev.waymark.kafka;

import static dev.waymark.kafka.TestKafka.WAIT;
import static dev.waymark.kafka.TestKafka.take;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.messaging.AckDecision;
import dev.waymark.messaging.Concurrency;
import dev.waymark.messaging.Ingested;
import dev.waymark.messaging.MessageSource;
import dev.waymark.messaging.ProcessingApp;
import dev.waymark.messaging.ProcessorState;
import dev.waymark.store.DeadLetterReason;
import dev.waymark.testkit.KafkaExtension;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Shutdown: what a stopping source costs its caller, and what it still holds once it counts as closed. */
class KafkaShutdownTest {

    @RegisterExtension
    static final KafkaExtension KAFKA = new KafkaExtension();

    private final TestKafka kafka = new TestKafka(KAFKA);

    /** A source that counts the polls its processor makes after {@link #shutdown()}. */
    private static final class PollCounting implements MessageSource {
        final KafkaSource source;
        final AtomicLong pollsAfterShutdown = new AtomicLong();
        volatile boolean shutDown;

        PollCounting(KafkaSource source) {
            this.source = source;
        }

        @Override
        public String name() {
            return source.name();
        }

        @Override
        public Optional<Ingested> poll(Duration timeout) throws Exception {
            if (shutDown) {
                pollsAfterShutdown.incrementAndGet();
            }
            return source.poll(timeout);
        }

        @Override
        public boolean isFinished() {
            return source.isFinished();
        }

        @Override
        public void shutdown() {
            shutDown = true;
            source.shutdown();
        }

        @Override
        public void processorEnded() {
            source.processorEnded();
        }
    }

    @Test
    void polling_a_draining_source_waits_for_the_consumer_to_close_instead_of_spinning() throws Exception {
        String topic = KAFKA.createTopic("drain-poll", 1);
        kafka.produce(topic, 0, 1, 1);
        String group = kafka.group();
        PollCounting source = new PollCounting(KafkaSource.of(kafka.config(group, topic).build()));
        CountDownLatch handling = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        // orderedByKey: an ingester thread polls the source while the handler runs.
        ProcessingApp app = ProcessingApp.builder().processor("p", source, Concurrency.orderedByKey(2), m -> {
            handling.countDown();
            release.await(30, TimeUnit.SECONDS);
            return AckDecision.ok();
        }).build().start();
        try {
            assertThat(handling.await(30, TimeUnit.SECONDS)).isTrue();
            CompletableFuture<Boolean> stopped = CompletableFuture.supplyAsync(app::stop);
            await().atMost(WAIT).until(() -> app.snapshot().get("p").lifecycle() == ProcessorState.Lifecycle.DRAINING);
            // The handler holds the drain open for a second; the source waits for its acknowledgement.
            await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(3))
                    .until(() -> app.snapshot().get("p").lifecycle() == ProcessorState.Lifecycle.DRAINING);
            release.countDown();
            assertThat(stopped.get(30, TimeUnit.SECONDS)).isTrue();
            assertThat(source.pollsAfterShutdown.get()).as("polls during a drain of about a second")
                    .isPositive().isLessThan(100);
            assertThat(source.isFinished()).isTrue();
            assertThat(kafka.committed(group, topic)).containsEntry(0, 1L);
        } finally {
            release.countDown();
            app.stop();
            source.source.close();
        }
    }

    @Test
    void the_dead_letter_producer_is_closed_before_the_source_counts_as_closed() throws Exception {
        String topic = KAFKA.createTopic("dlt-close", 1);
        KAFKA.createTopic("dlt-close.DLT", 1);
        kafka.produce(topic, 0, 1, 1);
        String clientId = KAFKA.topic("dlt-producer");
        CloseGateInterceptor.Gate gate = CloseGateInterceptor.register(clientId);
        KafkaSource source = KafkaSource.of(kafka.config(kafka.group(), topic)
                .producerProperty(ProducerConfig.CLIENT_ID_CONFIG, clientId)
                .producerProperty(ProducerConfig.INTERCEPTOR_CLASSES_CONFIG, CloseGateInterceptor.class.getName())
                .build());
        try {
            take(source).ack().finalize(AckDecision.deadLetter(DeadLetterReason.poison("x"))); // opens the producer
            source.shutdown();
            assertThat(gate.closing.await(30, TimeUnit.SECONDS)).as("the producer is closing").isTrue();
            assertThat(source.isFinished()).as("finished while its dead-letter producer is still closing").isFalse();
            assertThat(source.awaitClosed(Duration.ofMillis(200))).isFalse();
            gate.release.countDown();
            assertThat(source.awaitClosed(WAIT)).isTrue();
            assertThat(source.isFinished()).isTrue();
        } finally {
            gate.release.countDown();
            source.close();
        }
    }

    @Test
    void stop_gives_acknowledgements_the_timeout_then_closes_and_answers_whether_it_closed() throws Exception {
        String topic = KAFKA.createTopic("stop-answer", 1);
        KAFKA.createTopic("stop-answer.DLT", 1);
        kafka.produce(topic, 0, 2, 1);
        String clientId = KAFKA.topic("stop-answer-producer");
        CloseGateInterceptor.Gate gate = CloseGateInterceptor.register(clientId);
        String group = kafka.group();
        KafkaSource source = KafkaSource.of(kafka.config(group, topic).brokerOperationTimeout(Duration.ofMillis(500))
                .producerProperty(ProducerConfig.CLIENT_ID_CONFIG, clientId)
                .producerProperty(ProducerConfig.INTERCEPTOR_CLASSES_CONFIG, CloseGateInterceptor.class.getName())
                .build());
        try {
            take(source).ack().finalize(AckDecision.deadLetter(DeadLetterReason.poison("x"))); // opens the producer
            Ingested unacknowledged = take(source);
            long started = System.nanoTime();
            // the record handed out is never acknowledged and the producer's close hangs: not closed
            assertThat(source.stop(Duration.ofMillis(300))).isFalse();
            assertThat(Duration.ofNanos(System.nanoTime() - started))
                    .as("the timeout, then up to twice the broker operation timeout")
                    .isBetween(Duration.ofMillis(300), Duration.ofSeconds(10));
            gate.release.countDown();
            assertThat(source.stop(WAIT)).as("a later call answers for the same stop").isTrue();
            assertThat(source.isFinished()).isTrue();
            assertThat(kafka.committed(group, topic)).as("past the dead letter, not past the unacknowledged record")
                    .containsEntry(0, 1L);
            assertThat(unacknowledged.envelope().attempt()).isZero();
        } finally {
            gate.release.countDown();
            source.close();
        }
    }

    @Test
    void a_static_member_that_stops_leaves_the_group_so_another_takes_its_partitions_at_once() throws Exception {
        int partitions = 4;
        String topic = KAFKA.createTopic("static-member", partitions);
        String group = kafka.group();
        KafkaSource a = KafkaSource.of(kafka.config(group, topic).name("a")
                .consumerProperty(ConsumerConfig.CLIENT_ID_CONFIG, "member-a")
                .consumerProperty(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, "instance-a")
                .consumerProperty(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "45000").build());
        KafkaSource b = KafkaSource.of(kafka.config(group, topic).name("b")
                .consumerProperty(ConsumerConfig.CLIENT_ID_CONFIG, "member-b")
                .consumerProperty(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "45000").build());
        try {
            assertThat(a.poll(Duration.ofMillis(1))).isEmpty(); // starts its consumer
            assertThat(b.poll(Duration.ofMillis(1))).isEmpty();
            await().atMost(WAIT).until(() -> {
                Map<String, Integer> owned = kafka.owned(group);
                return owned.size() == 2 && !owned.containsValue(0);
            });
            a.shutdown();
            assertThat(a.awaitClosed(WAIT)).isTrue();
            // a's session lasts 45 s: b owning everything within a few seconds means a left the group.
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> kafka.owned(group).equals(Map.of("member-b", partitions)));
        } finally {
            a.close();
            b.close();
        }
    }

    @Test
    void a_static_member_closing_without_leaving_keeps_its_partitions_until_its_session_times_out()
            throws Exception {
        int partitions = 4;
        String topic = KAFKA.createTopic("static-stays", partitions);
        String group = kafka.group();
        KafkaSource a = KafkaSource.of(kafka.config(group, topic).name("a").leaveGroupOnClose(false)
                .consumerProperty(ConsumerConfig.CLIENT_ID_CONFIG, "member-a")
                .consumerProperty(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, "instance-a")
                .consumerProperty(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "45000").build());
        KafkaSource b = KafkaSource.of(kafka.config(group, topic).name("b")
                .consumerProperty(ConsumerConfig.CLIENT_ID_CONFIG, "member-b")
                .consumerProperty(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "45000").build());
        try {
            assertThat(a.poll(Duration.ofMillis(1))).isEmpty(); // starts its consumer
            assertThat(b.poll(Duration.ofMillis(1))).isEmpty();
            await().atMost(WAIT).until(() -> {
                Map<String, Integer> owned = kafka.owned(group);
                return owned.size() == 2 && !owned.containsValue(0);
            });
            int ownedByB = kafka.owned(group).get("member-b");
            a.shutdown();
            assertThat(a.awaitClosed(WAIT)).isTrue();
            // a's session lasts 45 s: a left the group (the default) would hand b everything within about a second.
            await().during(Duration.ofSeconds(4)).atMost(Duration.ofSeconds(6))
                    .until(() -> kafka.owned(group).getOrDefault("member-b", 0) == ownedByB);
        } finally {
            a.close();
            b.close();
        }
    }
}
