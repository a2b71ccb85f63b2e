package dev.waymark.kafka;

import static org.awaitility.Awaitility.await;

import dev.waymark.messaging.Ingested;
import dev.waymark.messaging.ProcessingApp;
import dev.waymark.testkit.KafkaExtension;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/** Helpers for tests against the in-process broker. */
final class TestKafka {

    static final Duration WAIT = dev.waymark.testkit.Waits.WAIT;
    private static final AtomicInteger groups = new AtomicInteger();

    private final KafkaExtension kafka;

    TestKafka(KafkaExtension kafka) {
        this.kafka = kafka;
    }

    /** A fresh group name in the class's namespace. */
    String group() {
        return kafka.topic("group-" + groups.incrementAndGet());
    }

    /**
     * A configuration with test-friendly timings; the source creates its missing dead-letter topics
     * (tests of a missing one set {@link MissingDeadLetterTopic#FAIL}, the default, again).
     */
    KafkaSourceConfigBuilder config(String group, String... topics) {
        return KafkaSourceConfig.builder(kafka.bootstrapServers(), group).topics(topics)
                .missingDeadLetterTopic(MissingDeadLetterTopic.CREATE)
                .pollTimeout(Duration.ofMillis(100)).commitInterval(Duration.ofMillis(50))
                .drainTimeout(Duration.ofSeconds(10)).brokerOperationTimeout(Duration.ofSeconds(5))
                .consumerProperty(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "10000")
                .consumerProperty(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "500");
    }

    /**
     * Creates {@code topic}'s default dead-letter topic {@code <topic>.DLT}, accepting records of
     * at most 64 bytes: every dead letter sent there is refused by the broker at once.
     */
    String createRefusingDeadLetterTopic(String topic) throws Exception {
        String dlt = topic + ".DLT";
        kafka.admin().createTopics(List.of(new NewTopic(dlt, 1, (short) 1)
                .configs(Map.of("max.message.bytes", "64")))).all().get(30, TimeUnit.SECONDS);
        return dlt;
    }

    static String text(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    KafkaProducer<byte[], byte[]> producer() {
        // Not idempotent: right after a topic is created the idempotent producer can wedge on
        // OutOfOrderSequence retries against the in-process broker; one request in flight keeps order.
        return new KafkaProducer<>(Map.<String, Object>of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                kafka.bootstrapServers(), ProducerConfig.LINGER_MS_CONFIG, "5",
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false", ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "1"),
                new ByteArraySerializer(), new ByteArraySerializer());
    }

    /** Produces {@code n} records {@code v<i>} with key {@code k<i % keys>} to one partition (or by key if partition < 0). */
    void produce(String topic, int partition, int n, int keys) {
        try (var producer = producer()) {
            for (int i = 0; i < n; i++) {
                producer.send(new ProducerRecord<>(topic, partition < 0 ? null : partition,
                        bytes("k" + (i % keys)), bytes("v" + i)));
            }
            producer.flush();
        }
    }

    void send(ProducerRecord<byte[], byte[]> record) throws Exception {
        try (var producer = producer()) {
            producer.send(record).get(30, TimeUnit.SECONDS);
        }
    }

    /** The group's committed offsets per partition of {@code topic} (missing partitions absent). */
    Map<Integer, Long> committed(String group, String topic) throws Exception {
        Map<TopicPartition, OffsetAndMetadata> all = kafka.admin().listConsumerGroupOffsets(group)
                .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
        Map<Integer, Long> out = new HashMap<>();
        all.forEach((tp, om) -> {
            if (om != null && tp.topic().equals(topic)) {
                out.put(tp.partition(), om.offset());
            }
        });
        return out;
    }

    /**
     * How many partitions each member of {@code group} owns, by client id; empty while no member
     * has joined yet (a source checks its dead-letter topics before its consumer joins).
     */
    Map<String, Integer> owned(String group) throws Exception {
        ConsumerGroupDescription d;
        try {
            d = kafka.admin().describeConsumerGroups(List.of(group)).describedGroups().get(group)
                    .get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof GroupIdNotFoundException) {
                return Map.of();
            }
            throw e;
        }
        Map<String, Integer> out = new HashMap<>();
        d.members().forEach(m -> out.put(m.clientId(), m.assignment().topicPartitions().size()));
        return out;
    }

    /** The end offset of every partition of {@code topic}. */
    Map<Integer, Long> endOffsets(String topic, int partitions) throws Exception {
        Map<TopicPartition, OffsetSpec> request = new HashMap<>();
        for (int p = 0; p < partitions; p++) {
            request.put(new TopicPartition(topic, p), OffsetSpec.latest());
        }
        return kafka.admin().listOffsets(request).all().get(30, TimeUnit.SECONDS).entrySet().stream()
                .collect(Collectors.toMap(e -> e.getKey().partition(), e -> e.getValue().offset()));
    }

    /** Whether the group committed every partition of {@code topic} up to its end. */
    boolean fullyCommitted(String group, String topic, int partitions) throws Exception {
        Map<Integer, Long> ends = endOffsets(topic, partitions);
        Map<Integer, Long> committed = committed(group, topic);
        return ends.entrySet().stream().allMatch(e -> e.getValue() == 0
                || committed.getOrDefault(e.getKey(), -1L).longValue() == e.getValue());
    }

    /** Waits until the group committed all of {@code topic}, then stops the app (also when the wait fails). */
    void awaitCommittedThenStop(ProcessingApp app, String group, String topic, int partitions) {
        try {
            await().atMost(WAIT).until(() -> fullyCommitted(group, topic, partitions));
        } finally {
            app.stop();
        }
    }

    /** Every record of {@code topic} (no group), waiting until at least {@code atLeast} arrived. */
    List<ConsumerRecord<byte[], byte[]>> readAll(String topic, int atLeast) {
        List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
        try (var consumer = new KafkaConsumer<>(Map.<String, Object>of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG, group(),
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"),
                new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            consumer.subscribe(List.of(topic));
            await().atMost(WAIT).until(() -> {
                consumer.poll(Duration.ofMillis(100)).forEach(out::add);
                return out.size() >= atLeast;
            });
        }
        return out;
    }

    /** Takes the next record from {@code source}, waiting up to the test wait. */
    static Ingested take(KafkaSource source) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            Optional<Ingested> next = source.poll(Duration.ofMillis(100));
            if (next.isPresent()) {
                return next.get();
            }
        }
        throw new AssertionError("no record from " + source.name() + " within " + WAIT);
    }

    /** Polls {@code source} for {@code window} and returns what it handed out. */
    static List<Ingested> drain(KafkaSource source, Duration window) throws Exception {
        List<Ingested> out = new ArrayList<>();
        long deadline = System.nanoTime() + window.toNanos();
        while (System.nanoTime() < deadline) {
            source.poll(Duration.ofMillis(50)).ifPresent(out::add);
        }
        return out;
    }

    static long offset(Ingested message) {
        return KafkaCoordinates.of(message.envelope()).offset();
    }
}
