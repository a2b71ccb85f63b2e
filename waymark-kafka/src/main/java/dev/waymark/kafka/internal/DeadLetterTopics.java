package dev.waymark.kafka.internal;

import dev.waymark.kafka.DeadLetterPolicy;
import dev.waymark.kafka.DeadLetterTopicException;
import dev.waymark.kafka.DeadLetterTopicException.Problem;
import dev.waymark.kafka.KafkaSourceConfig;
import dev.waymark.kafka.MissingDeadLetterTopic;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Checks, before any record of a source topic is handed out, that its dead-letter topic exists (or
 * creates it, under {@link MissingDeadLetterTopic#CREATE}) and is not one the source's pattern
 * matches. Runs on the consumer thread: at start for a topic list, on assignment for the topics a
 * pattern brings; each source topic is checked once. Also learns how large a record the source
 * topics accept ({@code max.message.bytes}), which sizes the dead-letter producer.
 */
final class DeadLetterTopics {

    private static final Logger log = LoggerFactory.getLogger(DeadLetterTopics.class);

    private final KafkaSourceConfig config;
    private final DeadLetterPolicy.Named policy;
    private final int headroom;
    /** Source topics whose dead-letter topic was checked (consumer thread only). */
    private final Set<String> checked = new HashSet<>();
    /** The largest max.message.bytes among the source topics, or -1 while unknown. */
    private volatile long largestSourceRecord = -1;

    DeadLetterTopics(KafkaSourceConfig config, DeadLetterPolicy.Named policy) {
        this.config = config;
        this.policy = policy;
        this.headroom = DeadLetterRecords.headroom(config.groupId());
    }

    /** The largest {@code max.message.bytes} of the source topics checked so far, or -1 when unknown. */
    long largestSourceRecord() {
        return largestSourceRecord;
    }

    /**
     * Checks the dead-letter topics of those of {@code sourceTopics} not checked yet, retrying a
     * retriable broker failure within the broker retry budget.
     *
     * @throws DeadLetterTopicException when a dead-letter topic is missing (and not to be created),
     *     matched by the source's own pattern, or cannot be checked or created
     * @return false when a stop was requested before the check was done
     */
    boolean ensure(Collection<String> sourceTopics, BooleanSupplier stopRequested) {
        Map<String, String> targets = new TreeMap<>(); // source topic -> dead-letter topic
        for (String topic : new TreeSet<>(sourceTopics)) { // sorted: orders is refused before orders.DLT
            if (!checked.contains(topic)) {
                targets.put(topic, target(topic));
            }
        }
        if (targets.isEmpty()) {
            return true;
        }
        int attempts = config.brokerRetry().attempts();
        for (int attempt = 1;; attempt++) {
            Admin admin = Admin.create(ClientSettings.admin(config));
            try {
                check(admin, targets);
                checked.addAll(targets.keySet());
                return true;
            } catch (RetriableException | TimeoutException e) {
                if (attempt >= attempts) {
                    throw new DeadLetterTopicException(prefix() + "checking dead-letter topic(s) "
                            + new HashSet<>(targets.values()) + " failed after " + attempt + " attempt(s): " + e
                            + "; is the broker reachable?", Problem.CHECK_FAILED, targets.values().iterator().next(),
                            null, -1, -1, e);
                }
                log.warn("{}checking dead-letter topics failed (attempt {} of {}): {}", prefix(), attempt, attempts,
                        e.toString());
            } finally {
                admin.close(config.brokerRetry().timeout());
            }
            if (stopRequested.getAsBoolean()) {
                return false;
            }
            Backoff.sleep(config.brokerRetry().retry(), attempt);
        }
    }

    private String target(String topic) {
        String target;
        try {
            target = policy.topicFor(topic);
        } catch (RuntimeException e) {
            throw new DeadLetterTopicException(prefix() + "the dead-letter policy names no topic for topic '" + topic
                    + "': " + e.getMessage(), Problem.CHECK_FAILED, null, topic, -1, -1, e);
        }
        Pattern pattern = config.topicPattern();
        if (pattern != null && pattern.matcher(target).matches()) {
            throw new DeadLetterTopicException(prefix() + "dead-letter topic '" + target + "' of topic '" + topic
                    + "' matches the source's own topic pattern '" + pattern + "', so it would read its dead letters"
                    + " back; exclude it from the pattern or choose another dead-letter topic", Problem.READ_BY_SOURCE,
                    target, topic, -1, -1, null);
        }
        return target;
    }

    private void check(Admin admin, Map<String, String> targets) throws TimeoutException {
        Set<String> deadLetterTopics = new HashSet<>(targets.values());
        Map<String, KafkaFuture<?>> described = new HashMap<>(
                admin.describeTopics(deadLetterTopics).topicNameValues());
        List<String> missing = new ArrayList<>();
        for (String dlt : deadLetterTopics) {
            try {
                get(described.get(dlt));
            } catch (UnknownTopicOrPartitionException e) {
                missing.add(dlt);
            } catch (RetriableException e) {
                throw e;
            } catch (RuntimeException e) {
                throw new DeadLetterTopicException(prefix() + "cannot check dead-letter topic '" + dlt + "': " + e
                        + " (its principal needs DESCRIBE on the topic, which WRITE implies)", Problem.CHECK_FAILED,
                        dlt, sourceOf(targets, dlt), -1, -1, e);
            }
        }
        missing.sort(null);
        Set<String> sized = new HashSet<>(targets.keySet());
        sized.addAll(deadLetterTopics);
        sized.removeAll(missing);
        Map<String, Long> limits = TopicLimits.read(admin, sized, config.brokerRetry().timeout());
        targets.keySet().forEach(topic -> Optional.ofNullable(limits.get(topic))
                .ifPresent(limit -> largestSourceRecord = Math.max(largestSourceRecord, limit)));
        if (!missing.isEmpty()) {
            if (config.missingDeadLetterTopic() == MissingDeadLetterTopic.FAIL) {
                String first = missing.get(0);
                throw new DeadLetterTopicException(prefix() + "dead-letter topic(s) " + missing + " do not exist"
                        + " (for topic(s) " + sourcesOf(targets, missing) + "); create them before the source starts"
                        + " (kafka-topics.sh --create --topic " + first + " ...), or let the source create them with"
                        + " missingDeadLetterTopic(MissingDeadLetterTopic.CREATE); nothing was consumed",
                        Problem.MISSING, first, sourceOf(targets, first), -1, -1, null);
            }
            create(admin, targets, missing, limits);
        }
        warnIfSmall(targets, limits, missing);
    }

    /**
     * Creates the missing topics with the broker's defaults, except {@code max.message.bytes}: the
     * largest of their source topics' plus the headroom, when the source topics' limits are known.
     */
    private void create(Admin admin, Map<String, String> targets, List<String> missing, Map<String, Long> limits)
            throws TimeoutException {
        List<NewTopic> topics = new ArrayList<>();
        for (String dlt : missing) {
            NewTopic topic = new NewTopic(dlt, Optional.empty(), Optional.empty());
            long needed = neededFor(targets, dlt, limits);
            if (needed > 0) {
                topic.configs(Map.of(TopicConfig.MAX_MESSAGE_BYTES_CONFIG, Long.toString(needed)));
            }
            topics.add(topic);
        }
        Map<String, KafkaFuture<Void>> created = admin.createTopics(topics).values();
        for (String dlt : missing) {
            try {
                get(created.get(dlt));
                log.info("{}created dead-letter topic '{}'", prefix(), dlt);
            } catch (TopicExistsException e) {
                log.debug("{}dead-letter topic '{}' was created meanwhile", prefix(), dlt); // another member did
            } catch (RetriableException e) {
                throw e;
            } catch (RuntimeException e) {
                throw new DeadLetterTopicException(prefix() + "creating dead-letter topic '" + dlt + "' failed: " + e
                        + "; create it yourself, or give the source's principal CREATE on it", Problem.CHECK_FAILED,
                        dlt, sourceOf(targets, dlt), -1, -1, e);
            }
        }
    }

    /** A WARN for each existing dead-letter topic that would refuse the dead letter of a record its source accepts. */
    private void warnIfSmall(Map<String, String> targets, Map<String, Long> limits, List<String> created) {
        for (String dlt : new HashSet<>(targets.values())) {
            Long limit = limits.get(dlt);
            long needed = neededFor(targets, dlt, limits);
            if (!created.contains(dlt) && limit != null && needed > limit) {
                log.warn("{}dead-letter topic '{}' accepts records up to {} bytes (max.message.bytes), but a record of"
                        + " its source topic(s) {} with the dead-letter headers may take {}: such a record could not be"
                        + " dead-lettered; raise it (kafka-configs.sh --alter --entity-type topics --entity-name {}"
                        + " --add-config max.message.bytes={})", prefix(), dlt, limit,
                        sourcesOf(targets, List.of(dlt)), needed, dlt, needed);
            }
        }
    }

    /** The largest known limit among the sources of {@code dlt} plus the headroom, or -1 when none is known. */
    private long neededFor(Map<String, String> targets, String dlt, Map<String, Long> limits) {
        long largest = -1;
        for (Map.Entry<String, String> e : targets.entrySet()) {
            Long limit = limits.get(e.getKey());
            if (e.getValue().equals(dlt) && limit != null) {
                largest = Math.max(largest, limit);
            }
        }
        return largest < 0 ? -1 : largest + headroom;
    }

    private static String sourceOf(Map<String, String> targets, String dlt) {
        return targets.entrySet().stream().filter(e -> e.getValue().equals(dlt)).map(Map.Entry::getKey).findFirst()
                .orElse(null);
    }

    private static List<String> sourcesOf(Map<String, String> targets, List<String> dlts) {
        return targets.entrySet().stream().filter(e -> dlts.contains(e.getValue())).map(Map.Entry::getKey).toList();
    }

    private String prefix() {
        return "kafka source '" + config.name() + "': ";
    }

    /** The future's value, its failure unwrapped (a client exception), bounded by the broker operation timeout. */
    private <T> T get(KafkaFuture<T> future) throws TimeoutException {
        return TopicLimits.get(future, config.brokerRetry().timeout());
    }
}
