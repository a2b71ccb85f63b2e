package dev.waymark.kafka.internal;

import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.InterruptException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The record size limits ({@code max.message.bytes}) of topics, as far as the broker tells them. */
final class TopicLimits {

    private static final Logger log = LoggerFactory.getLogger(TopicLimits.class);

    private TopicLimits() {}

    /**
     * The effective {@code max.message.bytes} (the topic's own or the broker's default) of each of
     * {@code topics} the broker describes; a topic it does not (no DESCRIBE_CONFIGS permission, no
     * answer in time) is left out: its limit is unknown, which only makes the sizing less exact.
     */
    static Map<String, Long> read(Admin admin, Collection<String> topics, Duration timeout) {
        Map<String, Long> out = new HashMap<>();
        if (topics.isEmpty()) {
            return out;
        }
        List<ConfigResource> resources = topics.stream()
                .map(t -> new ConfigResource(ConfigResource.Type.TOPIC, t)).toList();
        Map<ConfigResource, KafkaFuture<Config>> described = admin.describeConfigs(resources).values();
        for (ConfigResource resource : resources) {
            try {
                ConfigEntry entry = get(described.get(resource), timeout).get(TopicConfig.MAX_MESSAGE_BYTES_CONFIG);
                if (entry != null && entry.value() != null) {
                    out.put(resource.name(), Long.parseLong(entry.value()));
                }
            } catch (TimeoutException | RuntimeException e) {
                log.debug("max.message.bytes of topic '{}' unknown: {}", resource.name(), e.toString());
            }
        }
        return out;
    }

    /**
     * The future's value within {@code timeout}; its failure is thrown as the client's exception.
     *
     * @throws InterruptException when interrupted, with the flag set again (as the Kafka clients do)
     */
    static <T> T get(KafkaFuture<T> future, Duration timeout) throws TimeoutException {
        try {
            return future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new KafkaException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptException(e);
        }
    }
}
