package dev.waymark.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class KafkaExtensionTest {

    @RegisterExtension
    static final KafkaExtension KAFKA = new KafkaExtension();

    @Test
    void a_consumer_group_reads_what_was_produced_to_the_classes_own_topic() throws Exception {
        String topic = KAFKA.createTopic("orders", 3);
        assertThat(topic).startsWith("kafkaextensiontest-").endsWith("-orders");
        try (var producer = new KafkaProducer<>(Map.<String, Object>of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, KAFKA.bootstrapServers()),
                new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < 10; i++) {
                producer.send(new ProducerRecord<>(topic, "k" + i, "v" + i)).get();
            }
        }
        List<ConsumerRecord<String, String>> read = new ArrayList<>();
        try (var consumer = new KafkaConsumer<>(Map.<String, Object>of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, KAFKA.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG, KAFKA.topic("group"),
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"),
                new StringDeserializer(), new StringDeserializer())) {
            consumer.subscribe(List.of(topic));
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                consumer.poll(Duration.ofMillis(200)).forEach(read::add);
                return read.size() >= 10;
            });
        }
        assertThat(read).extracting(ConsumerRecord::value).containsExactlyInAnyOrder(
                "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9");
        assertThat(KAFKA.admin().listTopics().names().get()).contains(topic);
    }

    @Test
    void the_broker_never_creates_a_topic_on_first_use_and_a_topic_can_have_its_own_configuration()
            throws Exception {
        String missing = KAFKA.topic("never-created");
        try (var producer = new KafkaProducer<>(Map.<String, Object>of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, KAFKA.bootstrapServers(),
                ProducerConfig.MAX_BLOCK_MS_CONFIG, "1000"), new StringSerializer(), new StringSerializer())) {
            assertThatThrownBy(() -> producer.send(new ProducerRecord<>(missing, "k", "v")).get())
                    .hasMessageContaining("not present in metadata");
        }
        assertThat(KAFKA.admin().listTopics().names().get()).doesNotContain(missing);

        String small = KAFKA.createTopic("small", 1, Map.of("max.message.bytes", "4096"));
        Config config = KAFKA.admin().describeConfigs(List.of(new ConfigResource(ConfigResource.Type.TOPIC, small)))
                .all().get().values().iterator().next();
        assertThat(config.get("max.message.bytes").value()).isEqualTo("4096");
    }

    @Test
    void the_broker_can_be_stopped_and_started_again_on_the_same_address() throws Exception {
        String topic = KAFKA.createTopic("restart", 1);
        String before = KAFKA.bootstrapServers();
        KafkaBroker.get().stopBroker();
        try {
            // really down: nothing accepts a connection on the broker's address (before: only the cached
            // bootstrap string was compared, which holds whether the broker stopped or not)
            for (String address : before.split(",")) {
                int colon = address.lastIndexOf(':');
                InetSocketAddress broker = new InetSocketAddress(address.substring(0, colon),
                        Integer.parseInt(address.substring(colon + 1)));
                assertThatThrownBy(() -> {
                    try (Socket socket = new Socket()) {
                        socket.connect(broker, 2_000);
                    }
                }).as("a connection to the stopped broker at %s", address).isInstanceOf(ConnectException.class);
            }
        } finally {
            KafkaBroker.get().startBroker();
        }
        assertThat(KAFKA.bootstrapServers()).as("the same address after the restart").isEqualTo(before);
        try (var producer = new KafkaProducer<>(Map.<String, Object>of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, KAFKA.bootstrapServers()),
                new StringSerializer(), new StringSerializer())) {
            producer.send(new ProducerRecord<>(topic, "k", "after-restart")).get();
        }
        assertThat(KAFKA.admin().listTopics().names().get()).contains(topic);
    }
}
