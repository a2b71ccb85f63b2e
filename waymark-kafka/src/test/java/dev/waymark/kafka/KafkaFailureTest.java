package dev.waymark.kafka;

import static dev.waymark.kafka.TestKafka.WAIT;
import static dev.waymark.kafka.TestKafka.take;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.waymark.core.RetryPolicy;
import dev.waymark.kafka.KafkaSourceEvent.Kind;
import dev.waymark.messaging.AckDecision;
import dev.waymark.messaging.Concurrency;
import dev.waymark.messaging.Ingested;
import dev.waymark.messaging.ProcessingApp;
import dev.waymark.messaging.ProcessorState;
import dev.waymark.testkit.KafkaBroker;
import dev.waymark.testkit.KafkaExtension;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.NoOffsetForPartitionException;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.FencedInstanceIdException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Broker outages and fatal client errors: checklist 28, 29, 32, 33 and 35. */
class KafkaFailureTest {

    @RegisterExtension
    static final KafkaExtension KAFKA = new KafkaExtension();

    private final TestKafka kafka = new TestKafka(KAFKA);

    private static ProcessorState.Lifecycle lifecycle(ProcessingApp app) {
        return app.snapshot().values().iterator().next().lifecycle();
    }

    @Test
    void a_broker_restart_while_consuming_is_survived_to_zero_lag_with_every_record_handled() throws Exception {
        String topic = KAFKA.createTopic("restart", 3);
        kafka.produce(topic, -1, 600, 60);
        String group = kafka.group();
        RecordingListener events = new RecordingListener();
        Set<String> handled = ConcurrentHashMap.newKeySet();
        CountDownLatch brokerDown = new CountDownLatch(1);
        KafkaSource source = KafkaSource.of(kafka.config(group, topic).listener(events)
                .brokerOperationTimeout(Duration.ofSeconds(2))
                .brokerRetry(KafkaSourceConfig.DEFAULT_BROKER_RETRY.withMaxAttempts(20)).build());
        ProcessingApp app = ProcessingApp.builder().processor("p", source, Concurrency.orderedByKey(4), m -> {
            handled.add(m.id());
            if (handled.size() > 100) {
                brokerDown.await(60, TimeUnit.SECONDS); // mid-stream: these are acknowledged while the broker is down
            }
            LockSupport.parkNanos(2_000_000); // 2 ms of work
            return AckDecision.ok();
        }).build().start();
        try {
            await().atMost(WAIT).until(() -> handled.size() > 100);
            KafkaBroker.get().stopBroker();
            try {
                brokerDown.countDown();
                // The outage must be seen: a commit fails (and is retried) before the broker comes back.
                await().atMost(WAIT).until(() -> events.count(Kind.COMMIT_FAILED) > 0);
            } finally {
                KafkaBroker.get().startBroker();
            }
            kafka.produce(topic, -1, 300, 60);
            await().atMost(Duration.ofSeconds(90)).until(() -> source.failure().isPresent()
                    || handled.size() == 900 && kafka.fullyCommitted(group, topic, 3));
            assertThat(source.failure()).as("the outage is survived").isEmpty();
            assertThat(lifecycle(app)).as("never a silent normal completion")
                    .isEqualTo(ProcessorState.Lifecycle.RUNNING);
            assertThat(source.isFinished()).isFalse();
        } finally {
            app.stop();
        }
    }

    @Test
    void a_broker_outage_longer_than_the_retry_budget_ends_the_source_with_a_typed_error_never_normally()
            throws Exception {
        String topic = KAFKA.createTopic("outage", 1);
        kafka.produce(topic, 0, 10, 1);
        String group = kafka.group();
        RecordingListener events = new RecordingListener();
        List<Long> commitFailures = new CopyOnWriteArrayList<>();
        java.util.concurrent.atomic.AtomicBoolean brokerDown = new java.util.concurrent.atomic.AtomicBoolean();
        CountDownLatch release = new CountDownLatch(1);
        // a long backoff: the gaps between the failed commits of the outage are at least the backoff's
        KafkaSource source = KafkaSource.of(kafka.config(group, topic).listener(events)
                .listener(e -> {
                    if (e.kind() == Kind.COMMIT_FAILED && brokerDown.get()) {
                        commitFailures.add(System.nanoTime());
                    }
                })
                .brokerOperationTimeout(Duration.ofMillis(500))
                .brokerRetry(RetryPolicy.exponential(3, Duration.ofMillis(1000), Duration.ofSeconds(5)).withJitter(0.5))
                .build());
        ProcessingApp app = ProcessingApp.builder().processor("p", source, Concurrency.serial(), m -> {
            if (KafkaCoordinates.of(m.envelope()).offset() == 5) {
                release.await(60, TimeUnit.SECONDS);
            }
            return AckDecision.ok();
        }).build().start();
        try {
            await().atMost(WAIT).until(() -> kafka.committed(group, topic).getOrDefault(0, 0L) == 5L);
            brokerDown.set(true);
            KafkaBroker.get().stopBroker();
            try {
                release.countDown(); // offset 5 is acknowledged while the broker is down: its commit fails
                await().atMost(WAIT).until(() -> lifecycle(app) == ProcessorState.Lifecycle.FAILED);
            } finally {
                KafkaBroker.get().startBroker();
            }
            KafkaSourceException failure = source.failure().orElseThrow();
            assertThat(failure.topic()).isEqualTo(topic);
            assertThat(failure.partition()).isZero();
            assertThat(failure.offset()).isGreaterThanOrEqualTo(6);
            assertThat(failure).hasMessageContaining("after 3 attempt(s)");
            assertThat(events.of(Kind.COMMIT_FAILED)).hasSize(3);
            // backoff 1 s doubled per attempt, jittered down to half at most: >= 0.5 s, then >= 1 s
            assertThat(commitFailures).hasSize(3);
            assertThat(Duration.ofNanos(commitFailures.get(1) - commitFailures.get(0)))
                    .isGreaterThanOrEqualTo(Duration.ofMillis(500));
            assertThat(Duration.ofNanos(commitFailures.get(2) - commitFailures.get(1)))
                    .isGreaterThanOrEqualTo(Duration.ofMillis(1000));
            assertThat(events.of(Kind.FATAL)).hasSize(1);
            assertThat(source.isFinished()).as("a failed source is not finished").isFalse();
            assertThatThrownBy(() -> source.poll(Duration.ofMillis(10))).isSameAs(failure);
            assertThat(app.snapshot().get("p").failure()).contains(topic);
        } finally {
            app.stop();
        }
        assertThat(kafka.committed(group, topic)).containsEntry(0, 5L);
    }

    @Test
    void a_fatal_commit_error_fails_the_source_after_one_attempt_with_a_typed_error() throws Exception {
        String topic = KAFKA.createTopic("fenced", 1);
        kafka.produce(topic, 0, 2, 1);
        String group = kafka.group();
        // Static members, heartbeats minutes apart: the fencing below is first seen by the commit, not a heartbeat.
        Map<String, String> member = Map.of(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, "the-member",
                ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "300000", ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG,
                "120000");
        RecordingListener events = new RecordingListener();
        KafkaSourceConfigBuilder config = kafka.config(group, topic).listener(events)
                .brokerRetry(KafkaSourceConfig.DEFAULT_BROKER_RETRY);
        member.forEach(config::consumerProperty);
        KafkaSource source = KafkaSource.of(config.build());
        try {
            Ingested first = take(source);
            Map<String, Object> usurperConfig = new HashMap<>(member);
            usurperConfig.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, KAFKA.bootstrapServers());
            usurperConfig.put(ConsumerConfig.GROUP_ID_CONFIG, group);
            usurperConfig.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
            try (var usurper = new KafkaConsumer<>(usurperConfig, new ByteArrayDeserializer(),
                    new ByteArrayDeserializer())) {
                // Same group.instance.id: the broker gives it the member's place and fences the source's consumer.
                usurper.subscribe(List.of(topic));
                await().pollInSameThread().atMost(WAIT).until(() -> { // a KafkaConsumer is single-threaded
                    usurper.poll(Duration.ofMillis(100));
                    return !usurper.assignment().isEmpty();
                });
                first.ack().finalize(AckDecision.ok()); // its commit is refused: FENCED_INSTANCE_ID, not retriable
                await().atMost(WAIT).until(() -> source.failure().isPresent());
            }
            KafkaSourceException failure = source.failure().orElseThrow();
            assertThat(failure).hasCauseInstanceOf(FencedInstanceIdException.class)
                    .hasMessageContaining("committing 1 partition(s) failed after 1 attempt(s)");
            assertThat(failure.topic()).isEqualTo(topic);
            assertThat(failure.partition()).isZero();
            assertThat(failure.offset()).isOne();
            assertThat(events.of(Kind.COMMIT_FAILED)).as("one attempt of the 5 allowed").hasSize(1);
            assertThat(events.of(Kind.FATAL)).hasSize(1);
            assertThatThrownBy(() -> source.poll(Duration.ofMillis(10))).isSameAs(failure);
            assertThat(kafka.committed(group, topic)).doesNotContainKey(0);
        } finally {
            source.close();
        }
    }

    @Test
    void a_fatal_poll_error_fails_the_source_at_once_with_the_partition_it_concerns() throws Exception {
        String topic = KAFKA.createTopic("no-offset", 1);
        kafka.produce(topic, 0, 3, 1);
        String group = kafka.group();
        RecordingListener events = new RecordingListener();
        KafkaSource source = KafkaSource.of(kafka.config(group, topic).listener(events)
                .consumerProperty(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none").build());
        ProcessingApp app = ProcessingApp.builder().processor("p", source, Concurrency.serial(),
                m -> AckDecision.ok()).build().start();
        try {
            await().atMost(WAIT).until(() -> lifecycle(app) == ProcessorState.Lifecycle.FAILED);
        } finally {
            app.stop();
        }
        KafkaSourceException failure = source.failure().orElseThrow();
        assertThat(failure).hasCauseInstanceOf(NoOffsetForPartitionException.class);
        assertThat(failure.topic()).isEqualTo(topic);
        assertThat(failure.partition()).isZero();
        assertThat(app.snapshot().get("p").received()).as("nothing handed out").isZero();
        assertThat(events.of(Kind.FATAL)).hasSize(1);
    }

    @Test
    void an_authentication_failure_is_fatal_after_one_attempt() throws Exception {
        String topic = KAFKA.createTopic("auth", 1);
        KafkaSource source = KafkaSource.of(kafka.config(kafka.group(), topic)
                .consumerProperty(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_PLAINTEXT")
                .consumerProperty(SaslConfigs.SASL_MECHANISM, "PLAIN")
                .consumerProperty(SaslConfigs.SASL_JAAS_CONFIG, "org.apache.kafka.common.security.plain."
                        + "PlainLoginModule required username=\"u\" password=\"p\";")
                .build());
        try {
            await().atMost(WAIT).until(() -> {
                try {
                    source.poll(Duration.ofMillis(50));
                    return false;
                } catch (KafkaSourceException e) {
                    return true;
                }
            });
            assertThat(source.failure().orElseThrow()).hasCauseInstanceOf(AuthenticationException.class);
            assertThat(source.isFinished()).isFalse();
        } finally {
            source.close();
        }
    }
}
