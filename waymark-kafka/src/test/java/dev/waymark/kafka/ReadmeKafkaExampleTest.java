package dev.waymark.kafka;

import static dev.waymark.kafka.TestKafka.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.core.DeadLetterReason;
import dev.waymark.kafka.micrometer.KafkaSourceMetrics;
import dev.waymark.messaging.AckDecision;
import dev.waymark.messaging.Concurrency;
import dev.waymark.messaging.ProcessingApp;
import dev.waymark.testkit.KafkaExtension;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The README's Kafka snippet, compiled and run (copy changes from here to the README). */
class ReadmeKafkaExampleTest {

    @RegisterExtension
    static final KafkaExtension KAFKA = new KafkaExtension();

    private final Set<String> charged = ConcurrentHashMap.newKeySet();

    private boolean valid(byte[] payload) {
        return payload.length > 0 && payload[0] == 'v';
    }

    private void charge(String messageId) {
        charged.add(messageId);
    }

    ProcessingApp payments(String bootstrapServers, String topic, MeterRegistry registry) {
        // --- README: Kafka adapter ---
        KafkaSource payments = KafkaSource.of(KafkaSourceConfig.builder(bootstrapServers, "payments-service")
                .topics(topic)
                .deadLetters(DeadLetterPolicy.topicSuffix(".DLT")) // the default: <topic>.DLT, checked at start
                .listener(new KafkaSourceMetrics(registry))
                .build());
        return ProcessingApp.builder()
                .processor("payments", payments, Concurrency.orderedByKey(16), msg -> {
                    if (!valid(msg.payload())) {
                        return AckDecision.deadLetter(DeadLetterReason.invalid("not a payment"));
                    }
                    charge(msg.id()); // idempotent on msg.id(): topic-partition-offset
                    return AckDecision.ok();
                })
                .build()
                .start();
        // --- end ---
    }

    @Test
    void the_readme_snippet_runs() throws Exception {
        String topic = KAFKA.createTopic("payments", 3);
        KAFKA.createTopic("payments.DLT", 1);
        TestKafka kafka = new TestKafka(KAFKA);
        kafka.produce(topic, -1, 30, 7);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ProcessingApp app = payments(KAFKA.bootstrapServers(), topic, registry);
        try {
            await().atMost(WAIT).until(() -> kafka.fullyCommitted("payments-service", topic, 3));
        } finally {
            app.stop();
        }
        assertThat(charged).hasSize(30);
    }
}
