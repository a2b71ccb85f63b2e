package dev.waymark.kafka.internal;

import dev.waymark.kafka.KafkaSourceConfig;
import dev.waymark.messaging.MessagingConfigException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The effective settings of a source's Kafka clients (the source's own over the user's properties),
 * checked as the clients check them when they are built: a bad property fails the configuration,
 * not the first poll or, worse, the first dead letter after its record was handled.
 */
public final class ClientSettings {

    /** The idempotent producer's limit on {@code max.in.flight.requests.per.connection}. */
    private static final int IDEMPOTENT_MAX_IN_FLIGHT = 5;

    private ClientSettings() {}

    /**
     * Checks the consumer and dead-letter producer settings a source would use.
     *
     * @throws MessagingConfigException naming the option ({@code consumerProperty} or
     *     {@code producerProperty}), the property, its value and the rule
     */
    public static void check(String bootstrapServers, String groupId, int maxPollRecords, Duration brokerTimeout,
            Map<String, String> consumerProperties, Map<String, String> producerProperties) {
        consumer(bootstrapServers, groupId, maxPollRecords, consumerProperties);
        producer(bootstrapServers, groupId, brokerTimeout, producerProperties);
    }

    /** The properties of the source's consumer. */
    static Map<String, Object> consumer(KafkaSourceConfig config) {
        return consumer(config.bootstrapServers(), config.groupId(), config.polling().maxPollRecords(),
                config.consumerProperties());
    }

    /**
     * The properties of the source's dead-letter producer, sized for dead letters: its
     * {@code max.request.size} is the configured one (the client's default 1 MiB unless set), or the
     * largest record a source topic accepts when that is larger, plus {@code headroom} for the
     * headers a dead letter adds; {@code buffer.memory} is raised to it when smaller. So a record
     * that its own producer or topic let through fits with those headers.
     *
     * @param largestSourceRecord the largest {@code max.message.bytes} of the source's topics, or -1 when unknown
     * @param headroom the most bytes the dead-letter headers add
     */
    static Map<String, Object> producer(KafkaSourceConfig config, long largestSourceRecord, int headroom) {
        Map<String, Object> props = producer(config.bootstrapServers(), config.groupId(),
                config.brokerRetry().timeout(),
                config.producerProperties());
        AbstractConfig parsed = new AbstractConfig(ProducerConfig.configDef(), props, false);
        long limit = Math.max(parsed.getInt(ProducerConfig.MAX_REQUEST_SIZE_CONFIG), largestSourceRecord) + headroom;
        int maxRequest = (int) Math.min(Integer.MAX_VALUE, limit);
        props.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, Integer.toString(maxRequest));
        if (parsed.getLong(ProducerConfig.BUFFER_MEMORY_CONFIG) < maxRequest) {
            props.put(ProducerConfig.BUFFER_MEMORY_CONFIG, Integer.toString(maxRequest));
        }
        return props;
    }

    /**
     * The properties of the admin client that checks and creates dead-letter topics: the producer's
     * connection and security settings (the dead-letter side's), with requests bounded by the broker
     * operation timeout.
     */
    static Map<String, Object> admin(KafkaSourceConfig config) {
        Map<String, Object> props = new HashMap<>();
        Set<String> known = AdminClientConfig.configNames();
        config.producerProperties().forEach((key, value) -> {
            if (known.contains(key)) {
                props.put(key, value);
            }
        });
        String timeout = Long.toString(config.brokerRetry().timeout().toMillis());
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, config.bootstrapServers());
        props.put(AdminClientConfig.CLIENT_ID_CONFIG, config.producerProperties().getOrDefault(
                ProducerConfig.CLIENT_ID_CONFIG, "waymark-dlt-" + config.groupId()) + "-admin");
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, timeout);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, timeout);
        return props;
    }

    private static Map<String, Object> consumer(String bootstrapServers, String groupId, int maxPollRecords,
            Map<String, String> properties) {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, "waymark-" + groupId + "-"
                + Long.toString(ThreadLocalRandom.current().nextLong(1L << 30), 36));
        props.putAll(properties);
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, maxPollRecords);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        try {
            // The client's own parsing and post-processing (protocol-specific rules included),
            // without logging every value as a client does when it starts.
            new ConsumerConfig(props, false) {};
        } catch (KafkaException e) {
            throw new MessagingConfigException("consumerProperty refused by the Kafka consumer: " + e.getMessage());
        }
        return props;
    }

    /**
     * Idempotent with {@code acks=all}: a dead letter counts once every in-sync replica has it.
     * {@code delivery.timeout.ms} defaults to the broker operation timeout, raised to
     * {@code linger.ms + request.timeout.ms} where the producer requires it.
     */
    private static Map<String, Object> producer(String bootstrapServers, String groupId, Duration brokerTimeout,
            Map<String, String> properties) {
        String timeout = Long.toString(brokerTimeout.toMillis());
        Map<String, Object> props = new HashMap<>(properties);
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        props.putIfAbsent(ProducerConfig.ACKS_CONFIG, "all");
        props.putIfAbsent(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        props.putIfAbsent(ProducerConfig.LINGER_MS_CONFIG, "0");
        props.putIfAbsent(ProducerConfig.MAX_BLOCK_MS_CONFIG, timeout);
        props.putIfAbsent(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, timeout);
        props.putIfAbsent(ProducerConfig.CLIENT_ID_CONFIG, "waymark-dlt-" + groupId);
        AbstractConfig parsed;
        try {
            // Parsing only: ProducerConfig's post-processing is reached only through a constructor
            // that logs every value, so its rules that concern this producer are checked below.
            parsed = new AbstractConfig(ProducerConfig.configDef(), props, false);
        } catch (KafkaException e) {
            throw new MessagingConfigException("producerProperty refused by the Kafka producer: " + e.getMessage());
        }
        String acks = parsed.getString(ProducerConfig.ACKS_CONFIG);
        if (!acks.equals("all") && !acks.equals("-1")) {
            throw refused(ProducerConfig.ACKS_CONFIG, acks, "must be all (or -1): a dead letter must be on every"
                    + " in-sync replica before the offset moves past its record");
        }
        if (parsed.getString(ProducerConfig.TRANSACTIONAL_ID_CONFIG) != null) {
            throw refused(ProducerConfig.TRANSACTIONAL_ID_CONFIG,
                    properties.get(ProducerConfig.TRANSACTIONAL_ID_CONFIG),
                    "is not supported: dead letters are published outside transactions");
        }
        if (parsed.getBoolean(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG)) {
            if (parsed.getInt(ProducerConfig.RETRIES_CONFIG) == 0) {
                throw refused(ProducerConfig.RETRIES_CONFIG, "0", "must be above 0 for the idempotent producer"
                        + " (or set enable.idempotence=false)");
            }
            int inFlight = parsed.getInt(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION);
            if (inFlight > IDEMPOTENT_MAX_IN_FLIGHT) {
                throw refused(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, Integer.toString(inFlight),
                        "must be at most " + IDEMPOTENT_MAX_IN_FLIGHT + " for the idempotent producer"
                                + " (or set enable.idempotence=false)");
            }
        }
        long lingerAndRequest = parsed.getLong(ProducerConfig.LINGER_MS_CONFIG)
                + parsed.getInt(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG);
        if (properties.containsKey(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG)) {
            int delivery = parsed.getInt(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG);
            if (delivery < lingerAndRequest) {
                throw refused(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, Integer.toString(delivery),
                        "must be >= linger.ms + request.timeout.ms (" + lingerAndRequest + ")");
            }
        } else {
            long delivery = Math.min(Integer.MAX_VALUE, Math.max(brokerTimeout.toMillis(), lingerAndRequest));
            props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, Long.toString(delivery));
        }
        return props;
    }

    private static MessagingConfigException refused(String property, String value, String rule) {
        return new MessagingConfigException("producerProperty '" + property + "' " + rule + ", got '" + value + "'");
    }
}
