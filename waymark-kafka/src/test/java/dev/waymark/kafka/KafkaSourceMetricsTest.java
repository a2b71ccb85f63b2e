package dev.waymark.kafka;

import static dev.waymark.kafka.TestKafka.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.kafka.micrometer.KafkaSourceMetrics;
import dev.waymark.messaging.AckDecision;
import dev.waymark.messaging.Concurrency;
import dev.waymark.messaging.ProcessingApp;
import dev.waymark.store.DeadLetterReason;
import dev.waymark.testkit.KafkaExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The Micrometer meters of a Kafka source. */
class KafkaSourceMetricsTest {

    @RegisterExtension
    static final KafkaExtension KAFKA = new KafkaExtension();

    private final TestKafka kafka = new TestKafka(KAFKA);

    @Test
    void commits_seeks_pauses_dead_letters_rebalances_and_lag_are_measured() throws Exception {
        // No retry hold: the retry seeks back and pauses for its delay, as past the budget.
        String topic = KAFKA.createTopic("metrics", 2);
        kafka.produce(topic, 0, 20, 1);
        kafka.produce(topic, 1, 20, 1);
        String group = kafka.group();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        KafkaSource source = KafkaSource.of(kafka.config(group, topic).name("orders").retryHoldBytes(0)
                .deadLetters(DeadLetterPolicy.logAndCommit()).listener(new KafkaSourceMetrics(registry)).build());
        AtomicBoolean retried = new AtomicBoolean();
        ProcessingApp app = ProcessingApp.builder().processor("p", source, Concurrency.serial(), m -> {
            long offset = KafkaCoordinates.of(m.envelope()).offset();
            if (offset == 5 && retried.compareAndSet(false, true)) {
                // long enough that the consumer loop sees it even on a busy machine: a 50 ms delay
                // could run out before the loop's next turn, which then had nothing to pause
                return AckDecision.retry(Duration.ofMillis(500));
            }
            return offset == 7 ? AckDecision.deadLetter(DeadLetterReason.poison("x")) : AckDecision.ok();
        }).build().start();
        try {
            await().atMost(WAIT).until(() -> kafka.fullyCommitted(group, topic, 2));
            await().atMost(WAIT).until(() -> registry.find("waymark.kafka.lag").gauges().size() == 2
                    && registry.find("waymark.kafka.lag").gauges().stream().allMatch(g -> g.value() == 0));
            assertThat(registry.get("waymark.kafka.lag").tag("topic", topic).tag("partition", "0").gauge().value())
                    .isZero();
        } finally {
            app.stop();
        }
        assertThat(registry.get("waymark.kafka.commits").tag("source", "orders").counter().count()).isPositive();
        assertThat(registry.get("waymark.kafka.seeks").counter().count()).isEqualTo(1);
        assertThat(registry.get("waymark.kafka.seek_fallbacks").counter().count()).isEqualTo(1);
        assertThat(registry.get("waymark.kafka.pauses").counter().count()).as("the retry delay pauses").isPositive();
        assertThat(registry.get("waymark.kafka.dead_letters").counter().count()).isEqualTo(2);
        assertThat(registry.get("waymark.kafka.rebalances").tag("kind", "assigned").counter().count()).isEqualTo(2);
        assertThat(registry.find("waymark.kafka.lag").gauges()).as("removed when the partitions are revoked on close")
                .isEmpty();
    }

    @Test
    void retries_held_in_memory_and_the_records_held_are_measured() throws Exception {
        String topic = KAFKA.createTopic("metrics-held", 1);
        kafka.produce(topic, 0, 20, 1);
        String group = kafka.group();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        KafkaSource source = KafkaSource.of(kafka.config(group, topic).name("held")
                .listener(new KafkaSourceMetrics(registry)).build());
        AtomicBoolean retried = new AtomicBoolean();
        ProcessingApp app = ProcessingApp.builder().processor("p", source, Concurrency.serial(), m -> {
            long offset = KafkaCoordinates.of(m.envelope()).offset();
            if (offset == 5 && retried.compareAndSet(false, true)) {
                return AckDecision.retry(Duration.ofSeconds(2)); // 5-19 held meanwhile
            }
            return AckDecision.ok();
        }).build().start();
        try {
            await().atMost(WAIT).until(() -> registry.find("waymark.kafka.held_records").gauge() != null
                    && registry.get("waymark.kafka.held_records").gauge().value() == 15);
            await().atMost(WAIT).until(() -> kafka.fullyCommitted(group, topic, 1));
            await().atMost(WAIT).until(() -> registry.get("waymark.kafka.held_records").gauge().value() == 0);
        } finally {
            app.stop();
        }
        assertThat(registry.get("waymark.kafka.retries_held").tag("source", "held").counter().count()).isEqualTo(1);
        assertThat(registry.find("waymark.kafka.seeks").counter()).as("no seek").isNull();
        assertThat(registry.find("waymark.kafka.seek_fallbacks").counter()).isNull();
    }
}
