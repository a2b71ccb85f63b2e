package dev.waymark.demo;

import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * How the fulfilment workflow's charge step requests a payment: a record on the payments topic,
 * keyed by order, acknowledged by the broker before the step completes (a retried step may send it
 * twice; the payment service is idempotent on the order).
 */
public final class DemoPayments implements DemoWorkflows.Payments, AutoCloseable {

    private final KafkaProducer<String, String> producer;
    private final String topic;

    private DemoPayments(KafkaProducer<String, String> producer, String topic) {
        this.producer = producer;
        this.topic = topic;
    }

    /** A producer to {@code topic} on {@code bootstrap}. */
    public static DemoPayments producer(String bootstrap, String topic) {
        Properties p = new Properties();
        p.putAll(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true",
                ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName(),
                ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName()));
        return new DemoPayments(new KafkaProducer<>(p), topic);
    }

    @Override
    public void requestPayment(DemoWorkflows.Order order) throws InterruptedException, ExecutionException {
        String value = "{\"order\":\"" + order.id() + "\",\"amountCents\":" + order.totalCents() + "}";
        producer.send(new ProducerRecord<>(topic, order.id(), value)).get();
    }

    @Override
    public void close() {
        producer.close();
    }
}
