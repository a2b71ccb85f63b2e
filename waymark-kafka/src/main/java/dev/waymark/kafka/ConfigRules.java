package dev.waymark.kafka;

import dev.waymark.messaging.MessagingConfigException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** The checks of {@link KafkaSourceConfig}'s components; each failure names the option, the value and the rule. */
final class ConfigRules {

    /** Consumer properties the source owns; setting them through {@code consumerProperty} is refused. */
    static final Set<String> OWNED_CONSUMER_PROPERTIES = Set.of("bootstrap.servers", "group.id",
            "enable.auto.commit", "key.deserializer", "value.deserializer", "max.poll.records");
    /** Producer properties the source owns. */
    static final Set<String> OWNED_PRODUCER_PROPERTIES = Set.of("bootstrap.servers", "key.serializer",
            "value.serializer");

    private ConfigRules() {}

    static void requireText(String field, String value) {
        if (value == null || value.isBlank()) {
            throw new MessagingConfigException(
                    field + " must not be blank, got " + (value == null ? "null" : "'" + value + "'"));
        }
    }

    static void requireBetween(String field, Duration value, Duration min, Duration max) {
        if (value == null || value.compareTo(min) < 0 || value.compareTo(max) > 0) {
            throw new MessagingConfigException(field + " must be between " + min + " and " + max + ", got " + value);
        }
    }

    /** An immutable copy; the list (empty with a topic pattern) and each topic must be given. */
    static List<String> topics(List<String> topics) {
        if (topics == null) {
            throw new MessagingConfigException("topics must not be null (an empty list with topicPattern)");
        }
        for (String topic : topics) {
            requireText("topics", topic);
        }
        return List.copyOf(topics);
    }

    /** An immutable copy; refuses a null map, a null key or value, and a property the source owns. */
    static Map<String, String> properties(String option, Map<String, String> properties, Set<String> owned) {
        if (properties == null) {
            throw new MessagingConfigException(option + " properties must not be null (an empty map for none)");
        }
        for (Map.Entry<String, String> e : properties.entrySet()) {
            if (e.getKey() == null) {
                throw new MessagingConfigException(option + " needs a key, got null");
            }
            if (e.getValue() == null) {
                throw new MessagingConfigException(option + " '" + e.getKey() + "' needs a value, got null");
            }
            if (owned.contains(e.getKey())) {
                throw new MessagingConfigException(option + " '" + e.getKey() + "' is set by the source itself"
                        + " (use the builder option, or nothing for auto-commit and (de)serializers)");
            }
        }
        return Map.copyOf(properties);
    }

    /** An immutable copy; the list (empty for none) and each listener must be given. */
    static List<KafkaSourceListener> listeners(List<KafkaSourceListener> listeners) {
        if (listeners == null) {
            throw new MessagingConfigException("listeners must not be null (an empty list for none)");
        }
        for (KafkaSourceListener listener : listeners) {
            if (listener == null) {
                throw new MessagingConfigException("listeners must not hold null, got " + listeners);
            }
        }
        return List.copyOf(listeners);
    }

    /**
     * A dead-letter topic among the source's own topics would be read back and dead-lettered again
     * ({@code orders.DLT}, {@code orders.DLT.DLT}, ...). A pattern is checked on publish instead,
     * since the topics it matches are known only then.
     */
    static void refuseOwnDeadLetters(List<String> topics, DeadLetterPolicy deadLetters) {
        if (!(deadLetters instanceof DeadLetterPolicy.Named named)) {
            return;
        }
        for (String topic : topics) {
            String target;
            try {
                target = named.topicFor(topic);
            } catch (IllegalStateException e) {
                throw new MessagingConfigException("deadLetters names no dead-letter topic for topic '" + topic + "'");
            }
            if (topics.contains(target)) {
                throw new MessagingConfigException("deadLetters sends the dead letters of topic '" + topic + "' to '"
                        + target + "', which is one of the source's own topics " + topics
                        + ": it would read them back; choose a dead-letter topic outside topics");
            }
        }
    }
}
