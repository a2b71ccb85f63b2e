package dev.waymark.kafka;

import static dev.waymark.kafka.TestKafka.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import dev.waymark.core.DeadLetterReason;
import dev.waymark.messaging.AckDecision;
import dev.waymark.messaging.Concurrency;
import dev.waymark.messaging.Message;
import dev.waymark.messaging.MessageKey;
import dev.waymark.messaging.ProcessingApp;
import dev.waymark.testkit.KafkaExtension;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Binary keys and null values (issue 29, item 4), on the in-process broker. */
class KafkaBinaryKeyTest {

    @RegisterExtension
    static final KafkaExtension KAFKA = new KafkaExtension();

    /** Two keys that are not UTF-8 and decode to the same text (U+FFFD) when read as UTF-8. */
    private static final byte[] FF = {(byte) 0xFF};
    private static final byte[] FE = {(byte) 0xFE};
    /** A UUID's 16 bytes, not UTF-8 either. */
    private static final byte[] UUID = {(byte) 0x9f, 0x3a, 0x00, (byte) 0xc3, 0x28, (byte) 0xa0, (byte) 0xa1,
            (byte) 0xe2, 0x28, (byte) 0xa1, (byte) 0xf0, 0x28, (byte) 0x8c, (byte) 0xbc, (byte) 0xff, 0x01};

    private final TestKafka kafka = new TestKafka(KAFKA);

    @Test
    void two_distinct_non_utf8_keys_stay_distinct_run_in_parallel_and_each_keeps_its_order_under_ordered_by_key()
            throws Exception {
        String topic = KAFKA.createTopic("bin", 1);
        for (int i = 0; i < 20; i++) {
            kafka.send(new ProducerRecord<>(topic, 0, i % 2 == 0 ? FF : FE, bytes(Integer.toString(i))));
        }
        CountDownLatch otherKeyHandled = new CountDownLatch(1);
        AtomicBoolean parallel = new AtomicBoolean();
        Map<MessageKey, List<Integer>> perKey = new ConcurrentHashMap<>();
        List<byte[]> keys = new CopyOnWriteArrayList<>();
        String group = kafka.group();
        ProcessingApp app = ProcessingApp.builder().processor("p", KafkaSource.of(kafka.config(group, topic).build()),
                Concurrency.orderedByKey(4), m -> {
                    int n = Integer.parseInt(TestKafka.text(m.payload()));
                    keys.add(m.key().bytes());
                    perKey.computeIfAbsent(m.key(), k -> new CopyOnWriteArrayList<>()).add(n);
                    if (n == 0) {
                        // merged into one key, the other key's records would queue behind this one
                        parallel.set(otherKeyHandled.await(10, TimeUnit.SECONDS));
                    } else if (n % 2 == 1) {
                        otherKeyHandled.countDown();
                    }
                    return AckDecision.ok();
                }).build().start();
        kafka.awaitCommittedThenStop(app, group, topic, 1);
        assertThat(parallel).as("key 0xFE ran while key 0xFF waited").isTrue();
        assertThat(perKey).containsOnlyKeys(MessageKey.of(FF), MessageKey.of(FE));
        assertThat(perKey.get(MessageKey.of(FF))).containsExactly(0, 2, 4, 6, 8, 10, 12, 14, 16, 18);
        assertThat(perKey.get(MessageKey.of(FE))).containsExactly(1, 3, 5, 7, 9, 11, 13, 15, 17, 19);
        assertThat(keys).hasSize(20).allSatisfy(k -> assertThat(k).satisfiesAnyOf(
                b -> assertThat(b).containsExactly(FF), b -> assertThat(b).containsExactly(FE)));
    }

    @Test
    void the_handler_sees_the_exact_key_bytes_and_tells_null_from_empty_for_keys_and_values() throws Exception {
        String topic = KAFKA.createTopic("nulls", 1);
        kafka.send(new ProducerRecord<>(topic, 0, UUID, bytes("uuid")));
        kafka.send(new ProducerRecord<>(topic, 0, null, null));
        kafka.send(new ProducerRecord<>(topic, 0, new byte[0], new byte[0]));
        kafka.send(new ProducerRecord<>(topic, 0, bytes("order-7"), null));
        List<Message> seen = new CopyOnWriteArrayList<>();
        String group = kafka.group();
        ProcessingApp app = ProcessingApp.builder().processor("p", KafkaSource.of(kafka.config(group, topic).build()),
                Concurrency.serial(), m -> {
                    seen.add(m);
                    return AckDecision.ok();
                }).build().start();
        kafka.awaitCommittedThenStop(app, group, topic, 1);
        assertThat(seen).hasSize(4);
        Message binary = seen.get(0);
        assertThat(binary.key().bytes()).containsExactly(UUID);
        assertThat(binary.key().isUtf8()).isFalse();
        assertThat(binary.envelope().orderingKey()).isEqualTo(MessageKey.of(UUID));
        assertThat(binary.tombstone()).isFalse();

        Message nothing = seen.get(1);
        assertThat(nothing.key()).as("a null key").isNull();
        assertThat(nothing.tombstone()).as("a null value").isTrue();
        assertThat(nothing.payload()).isEmpty();

        Message empty = seen.get(2);
        assertThat(empty.key()).as("an empty key").isNotNull().satisfies(k -> assertThat(k.isEmpty()).isTrue());
        assertThat(empty.tombstone()).as("an empty value").isFalse();
        assertThat(empty.payload()).isEmpty();

        Message tombstone = seen.get(3);
        assertThat(tombstone.key().asUtf8()).isEqualTo("order-7");
        assertThat(tombstone.tombstone()).isTrue();
    }

    @Test
    void a_dead_letter_keeps_the_key_bytes_and_null_or_empty_keys_and_values_unchanged() throws Exception {
        String topic = KAFKA.createTopic("dl-bin", 1);
        String dlt = KAFKA.createTopic("dl-bin.DLT", 1);
        kafka.send(new ProducerRecord<>(topic, 0, UUID, bytes("a")));
        kafka.send(new ProducerRecord<>(topic, 0, FF, null));
        kafka.send(new ProducerRecord<>(topic, 0, null, bytes("c")));
        kafka.send(new ProducerRecord<>(topic, 0, new byte[0], new byte[0]));
        String group = kafka.group();
        ProcessingApp app = ProcessingApp.builder().processor("p", KafkaSource.of(kafka.config(group, topic).build()),
                Concurrency.serial(), m -> AckDecision.deadLetter(DeadLetterReason.poison("binary")))
                .build().start();
        kafka.awaitCommittedThenStop(app, group, topic, 1);
        List<ConsumerRecord<byte[], byte[]>> dead = kafka.readAll(dlt, 4);
        assertThat(dead).hasSize(4);
        assertThat(dead.get(0).key()).containsExactly(UUID);
        assertThat(dead.get(0).value()).containsExactly(bytes("a"));
        assertThat(dead.get(1).key()).containsExactly(FF);
        assertThat(dead.get(1).value()).as("a tombstone stays a tombstone").isNull();
        assertThat(dead.get(2).key()).as("no key stays no key").isNull();
        assertThat(dead.get(3).key()).as("an empty key stays empty").isEmpty();
        assertThat(dead.get(3).value()).as("an empty value stays empty").isEmpty();
    }
}
