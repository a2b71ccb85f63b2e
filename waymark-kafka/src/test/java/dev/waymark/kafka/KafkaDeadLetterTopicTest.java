package dev.waymark.kafka;

import static dev.waymark.kafka.TestKafka.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.kafka.micrometer.KafkaSourceMetrics;
import dev.waymark.messaging.AckDecision;
import dev.waymark.messaging.Concurrency;
import dev.waymark.messaging.DeadLetterReason;
import dev.waymark.messaging.ProcessingApp;
import dev.waymark.messaging.ProcessorState;
import dev.waymark.testkit.KafkaExtension;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class KafkaDeadLetterTopicTest {

    @RegisterExtension
    static final KafkaExtension KAFKA = new KafkaExtension();

    private final TestKafka kafka = new TestKafka(KAFKA);

    @Test
    void a_missing_dead_letter_topic_fails_the_processor_at_start() throws Exception {
        String topic = KAFKA.createTopic("nodlt", 1);
        String group = kafka.group();
        ProcessingApp app = ProcessingApp.builder().processor("p", KafkaSource.of(kafka.config(group, topic).build()),
                Concurrency.serial(), m -> AckDecision.ok()).build().start();
        try {
            await().atMost(Duration.ofSeconds(15))
                    .until(() -> app.snapshot("p").lifecycle() == ProcessorState.Lifecycle.FAILED);
            assertThat(app.snapshot("p").failure()).contains(topic + ".DLT");
        } finally {
            app.stop();
        }
    }

    @Test
    void a_failed_publication_is_counted() throws Exception {
        String topic = KAFKA.createTopic("small", 1);
        KAFKA.admin().createTopics(List.of(new NewTopic(topic + ".DLT", 1, (short) 1)
                .configs(Map.of("max.message.bytes", "200")))).all().get(30, TimeUnit.SECONDS);
        kafka.send(new ProducerRecord<>(topic, 0, null, new byte[1000]));
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        String group = kafka.group();
        ProcessingApp app = ProcessingApp.builder().processor("p", KafkaSource.of(kafka.config(group, topic)
                .listener(new KafkaSourceMetrics(registry)).build()),
                Concurrency.serial(), m -> AckDecision.deadLetter(DeadLetterReason.poison("x"))).build().start();
        try {
            await().atMost(WAIT).until(() -> app.snapshot("p").lifecycle() == ProcessorState.Lifecycle.FAILED);
            Counter c = registry.find("waymark.kafka.dead_letter_failures").counter();
            assertThat(c).isNotNull();
        } finally {
            app.stop();
        }
    }

    @Test
    void a_record_near_the_request_limit_is_dead_lettered() throws Exception {
        String topic = KAFKA.createTopic("big", 1);
        KAFKA.admin().createTopics(List.of(new NewTopic(topic + ".DLT", 1, (short) 1)
                .configs(Map.of("max.message.bytes", Integer.toString(1_048_588 + 8192))))).all().get(30, TimeUnit.SECONDS);
        kafka.send(new ProducerRecord<>(topic, 0, TestKafka.bytes("k"), new byte[1_048_576 - 128]));
        String group = kafka.group();
        ProcessingApp app = ProcessingApp.builder().processor("p", KafkaSource.of(kafka.config(group, topic).build()),
                Concurrency.serial(), m -> AckDecision.deadLetter(DeadLetterReason.poison("too big to handle")))
                .build().start();
        kafka.awaitCommittedThenStop(app, group, topic, 1);
        assertThat(kafka.readAll(topic + ".DLT", 1).get(0).value()).hasSize(1_048_576 - 128);
    }
}
