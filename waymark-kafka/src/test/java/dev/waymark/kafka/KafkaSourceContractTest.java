package dev.waymark.kafka;

import dev.waymark.messaging.MessageSource;
import dev.waymark.messaging.MessageSourceContract;
import dev.waymark.testkit.KafkaExtension;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The adapter contract every MessageSource passes, for KafkaSource on a real broker. */
class KafkaSourceContractTest extends MessageSourceContract {

    @RegisterExtension
    static final KafkaExtension KAFKA = new KafkaExtension();

    private static final AtomicInteger topics = new AtomicInteger();

    @Override
    protected Fixture fixture(int messages) {
        TestKafka kafka = new TestKafka(KAFKA);
        String topic = KAFKA.createTopic("contract-" + topics.incrementAndGet(), 1);
        kafka.produce(topic, 0, messages, 3);
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < messages; i++) {
            ids.add(topic + "-0-" + i);
        }
        String group = kafka.group();
        KafkaSource source = KafkaSource.of(kafka.config(group, topic).build());
        return new Fixture() {
            @Override
            public MessageSource source() {
                return source;
            }

            @Override
            public List<String> expectedIds() {
                return ids;
            }

            @Override
            public boolean allAcknowledged() throws Exception {
                return kafka.fullyCommitted(group, topic, 1);
            }

            @Override
            public void close() {
                source.close();
            }
        };
    }
}
