package dev.waymark.kafka;

import static dev.waymark.kafka.TestKafka.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.messaging.AckDecision;
import dev.waymark.messaging.Concurrency;
import dev.waymark.messaging.ProcessingApp;
import dev.waymark.testkit.KafkaExtension;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class KafkaBinaryKeyTest {

    @RegisterExtension
    static final KafkaExtension KAFKA = new KafkaExtension();

    private final TestKafka kafka = new TestKafka(KAFKA);

    @Test
    void two_keys_that_are_not_utf8_are_not_merged_under_ordered_by_key() throws Exception {
        String topic = KAFKA.createTopic("bin", 1);
        kafka.send(new ProducerRecord<>(topic, 0, new byte[] {(byte) 0xFF}, TestKafka.bytes("a0")));
        kafka.send(new ProducerRecord<>(topic, 0, new byte[] {(byte) 0xFE}, TestKafka.bytes("b0")));
        CountDownLatch bHandled = new CountDownLatch(1);
        AtomicBoolean parallel = new AtomicBoolean();
        String group = kafka.group();
        ProcessingApp app = ProcessingApp.builder().processor("p", KafkaSource.of(kafka.config(group, topic).build()),
                Concurrency.orderedByKey(4), m -> {
                    if (TestKafka.text(m.payload()).equals("a0")) {
                        parallel.set(bHandled.await(10, TimeUnit.SECONDS));
                    } else {
                        bHandled.countDown();
                    }
                    return AckDecision.ok();
                }).build().start();
        kafka.awaitCommittedThenStop(app, group, topic, 1);
        assertThat(parallel).as("key 0xFE ran while key 0xFF waited").isTrue();
    }
}
