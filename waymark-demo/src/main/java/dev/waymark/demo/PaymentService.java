package dev.waymark.demo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.waymark.core.DeadLetterReason;
import dev.waymark.kafka.DeadLetterPolicy;
import dev.waymark.kafka.KafkaSource;
import dev.waymark.kafka.KafkaSourceConfig;
import dev.waymark.messaging.AckDecision;
import dev.waymark.messaging.Concurrency;
import dev.waymark.messaging.ProcessingApp;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import javax.sql.DataSource;

/**
 * The payment service: a Waymark processing app over the payments topic (Kafka adapter,
 * orderedByKey), recording each payment once in {@code demo_payments}; a request with a negative
 * amount is poison and goes to the dead-letter topic.
 */
final class PaymentService implements AutoCloseable {

    private final ProcessingApp app;

    PaymentService(String bootstrap, String topic, DataSource dataSource, String schema) {
        ObjectMapper json = new ObjectMapper();
        KafkaSource source = KafkaSource.of(KafkaSourceConfig.builder(bootstrap, "payment-service")
                .topics(topic)
                .deadLetters(DeadLetterPolicy.topicSuffix(".DLT"))
                .commitInterval(Duration.ofMillis(200))
                .build());
        app = ProcessingApp.builder()
                .processor("payments", source, Concurrency.orderedByKey(8), msg -> {
                    JsonNode request = json.readTree(msg.payload());
                    if (request.get("amountCents").asLong() < 0) {
                        return AckDecision.deadLetter(DeadLetterReason.poison(
                                "negative amount " + request.get("amountCents").asLong()));
                    }
                    try (Connection c = dataSource.getConnection();
                            PreparedStatement p = c.prepareStatement(
                                    "INSERT INTO \"" + schema + "\".demo_payments (order_id, amount_cents, message_id)"
                                            + " VALUES (?, ?, ?) ON CONFLICT (order_id) DO NOTHING")) {
                        p.setString(1, request.get("order").asText());
                        p.setLong(2, request.get("amountCents").asLong());
                        p.setString(3, msg.id());
                        p.executeUpdate();
                    }
                    return AckDecision.ok();
                })
                .build()
                .start();
    }

    @Override
    public void close() {
        app.stop();
    }
}
