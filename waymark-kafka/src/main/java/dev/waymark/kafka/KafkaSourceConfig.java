package dev.waymark.kafka;

import static dev.waymark.kafka.ConfigRules.requireBetween;
import static dev.waymark.kafka.ConfigRules.requireText;

import dev.waymark.core.RetryPolicy;
import dev.waymark.kafka.internal.ClientSettings;
import dev.waymark.messaging.MessagingConfigException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The validated, immutable configuration of a {@link KafkaSource}. Build it with
 * {@link #builder(String, String)}; {@link KafkaSourceConfigBuilder#build()} rejects a bad value with a
 * {@link MessagingConfigException} naming the option, the value and the rule. Consumer and
 * producer properties are checked as the Kafka clients check them, so a bad one fails here rather
 * than at the first poll or the first dead letter.
 *
 * @param name the source's name in logs and metrics
 * @param bootstrapServers {@code host:port[,host:port]}
 * @param groupId the consumer group
 * @param topics the topics, or empty when {@code topicPattern} is set
 * @param topicPattern a subscription pattern, or null when {@code topics} is set
 * @param polling poll and buffer sizing
 * @param commits commit cadence and shutdown drain
 * @param brokerRetry bounds on retrying broker operations
 * @param deadLetters what a dead-letter decision does
 * @param missingDeadLetterTopic what the source does at start about a dead-letter topic that does
 *     not exist: fail (the default) or create it
 * @param ordering what the envelope's ordering key is
 * @param consumerProperties extra {@code KafkaConsumer} properties (security, client id, ...)
 * @param leaveGroupOnClose whether the consumer leaves its group when the source closes, also as a
 *     static member ({@code group.instance.id}); false closes with the client's default, which
 *     leaves only as a dynamic member
 * @param producerProperties extra properties of the dead-letter {@code KafkaProducer}
 * @param listeners observers of source events
 */
public record KafkaSourceConfig(
        String name,
        String bootstrapServers,
        String groupId,
        List<String> topics,
        Pattern topicPattern,
        Polling polling,
        Commits commits,
        BrokerRetry brokerRetry,
        DeadLetterPolicy deadLetters,
        MissingDeadLetterTopic missingDeadLetterTopic,
        KafkaOrdering ordering,
        Map<String, String> consumerProperties,
        boolean leaveGroupOnClose,
        Map<String, String> producerProperties,
        List<KafkaSourceListener> listeners) {

    /** Default {@link Polling#pollTimeout()}. */
    public static final Duration DEFAULT_POLL_TIMEOUT = Duration.ofMillis(500);
    /** Default {@link Polling#maxPollRecords()}. */
    public static final int DEFAULT_MAX_POLL_RECORDS = 500;
    /**
     * Least default {@link Polling#bufferSize()}: unless set, the buffer holds
     * {@code max(DEFAULT_BUFFER_SIZE, 4 x maxPollRecords)} records.
     */
    public static final int DEFAULT_BUFFER_SIZE = 2_000;
    /**
     * Default {@link Polling#retryHoldBytes()}: 32 MiB of records held in memory behind retry
     * barriers, per source.
     */
    public static final long DEFAULT_RETRY_HOLD_BYTES = 32L << 20;
    /** Largest {@link Polling#retryHoldBytes()}: 4 GiB. */
    public static final long MAX_RETRY_HOLD_BYTES = 4L << 30;
    /** Default {@link Commits#interval()}. */
    public static final Duration DEFAULT_COMMIT_INTERVAL = Duration.ofSeconds(1);
    /**
     * Least {@link Commits#interval()}: the consumer's poll waits at most until the next commit is
     * due, so a shorter interval turns an idle consumer into a busy loop.
     */
    public static final Duration MIN_COMMIT_INTERVAL = Duration.ofMillis(10);
    /** Default {@link Commits#drainTimeout()}. */
    public static final Duration DEFAULT_DRAIN_TIMEOUT = Duration.ofSeconds(30);
    /**
     * Default {@link BrokerRetry#retry()}: 5 attempts, 200 ms after the first failure doubling up to
     * 5 s, a random half to all of each delay taken.
     */
    public static final RetryPolicy DEFAULT_BROKER_RETRY = RetryPolicy
            .exponential(5, Duration.ofMillis(200), Duration.ofSeconds(5)).withJitter(0.5);
    /** Default {@link BrokerRetry#timeout()}. */
    public static final Duration DEFAULT_BROKER_TIMEOUT = Duration.ofSeconds(10);
    /** Default {@link #leaveGroupOnClose()}: a closing consumer leaves its group, static or not. */
    public static final boolean DEFAULT_LEAVE_GROUP_ON_CLOSE = true;
    /** Default dead-letter policy: {@code <topic>.DLT}. */
    public static final String DEFAULT_DEAD_LETTER_SUFFIX = ".DLT";
    /** Default {@link #missingDeadLetterTopic()}: a missing dead-letter topic fails the source at start. */
    public static final MissingDeadLetterTopic DEFAULT_MISSING_DEAD_LETTER_TOPIC = MissingDeadLetterTopic.FAIL;
    /** Default {@link #ordering()}: the envelope's ordering key is the record key. */
    public static final KafkaOrdering DEFAULT_ORDERING = KafkaOrdering.KEY;

    /**
     * Poll and buffer sizing.
     *
     * @param pollTimeout longest a poll waits when no records come, 1 ms to 60 s; commands never wait
     *     behind it (they wake the poll)
     * @param maxPollRecords records per poll ({@code max.poll.records}), 1 to 100000
     * @param bufferSize records fetched but not yet handed to the processor before the source pauses
     *     fetching, at least {@code maxPollRecords}
     * @param retryHoldBytes memory for records held behind retry barriers (a retried record and the
     *     records its processor orders after it, redelivered from memory after the retry delay),
     *     counted as key and value bytes plus 128 bytes per record, 0 to 4 GiB; past it the
     *     partition is paused and sought back instead (0: every retry seeks back)
     */
    public record Polling(Duration pollTimeout, int maxPollRecords, int bufferSize, long retryHoldBytes) {

        /** With the default {@link #DEFAULT_RETRY_HOLD_BYTES}. */
        public Polling(Duration pollTimeout, int maxPollRecords, int bufferSize) {
            this(pollTimeout, maxPollRecords, bufferSize, DEFAULT_RETRY_HOLD_BYTES);
        }

        /** Validates. */
        public Polling {
            requireBetween("pollTimeout", pollTimeout, Duration.ofMillis(1), Duration.ofSeconds(60));
            if (maxPollRecords < 1 || maxPollRecords > 100_000) {
                throw new MessagingConfigException(
                        "maxPollRecords must be between 1 and 100000, got " + maxPollRecords);
            }
            if (bufferSize < maxPollRecords) {
                throw new MessagingConfigException("bufferSize must be >= maxPollRecords (" + maxPollRecords
                        + "), got " + bufferSize);
            }
            if (retryHoldBytes < 0 || retryHoldBytes > MAX_RETRY_HOLD_BYTES) {
                throw new MessagingConfigException("retryHoldBytes must be between 0 and " + MAX_RETRY_HOLD_BYTES
                        + " (4 GiB), got " + retryHoldBytes);
            }
        }
    }

    /**
     * Commit cadence.
     *
     * @param interval how often acknowledged offsets are committed, 10 ms to 60 s
     * @param drainTimeout after {@code shutdown()}, how long the source waits for the
     *     acknowledgements of messages it handed out before its final commit, 0 to 10 min
     */
    public record Commits(Duration interval, Duration drainTimeout) {
        /** Validates. */
        public Commits {
            requireBetween("commitInterval", interval, MIN_COMMIT_INTERVAL, Duration.ofSeconds(60));
            requireBetween("drainTimeout", drainTimeout, Duration.ZERO, Duration.ofMinutes(10));
        }
    }

    /**
     * Bounds on broker operations (polls, commits, dead-letter publishing).
     *
     * @param retry how a retriable poll or commit failure is retried before the source ends with a
     *     {@link KafkaSourceException}: 1 to 100 attempts, delays at most 60 s; a fatal failure gets
     *     one attempt (a dead-letter publish is one attempt bounded by {@code timeout}; the runtime
     *     retries the acknowledgement instead)
     * @param timeout how long one attempt (a commit, a dead-letter publish) may take, 100 ms to 5 min
     */
    public record BrokerRetry(RetryPolicy retry, Duration timeout) {
        /** Validates. */
        public BrokerRetry {
            if (retry == null || retry.maxAttempts() > 100) {
                throw new MessagingConfigException("brokerRetry must allow 1 to 100 attempts, got " + retry);
            }
            requireBetween("brokerRetry maxDelay", retry.maxDelay(), Duration.ZERO, Duration.ofSeconds(60));
            requireBetween("brokerOperationTimeout", timeout, Duration.ofMillis(100), Duration.ofMinutes(5));
        }

        /** Attempts in all of one broker operation ({@link RetryPolicy#maxAttempts()}). */
        public int attempts() {
            return retry.maxAttempts();
        }
    }

    /** Validates and copies. */
    public KafkaSourceConfig {
        requireText("bootstrapServers", bootstrapServers);
        requireText("groupId", groupId);
        requireText("name", name);
        topics = ConfigRules.topics(topics);
        if (topics.isEmpty() == (topicPattern == null)) {
            throw new MessagingConfigException("exactly one of topics and topicPattern must be set, got topics="
                    + topics + " topicPattern=" + topicPattern);
        }
        if (polling == null || commits == null || brokerRetry == null || deadLetters == null || ordering == null) {
            throw new MessagingConfigException(
                    "polling, commits, brokerRetry, deadLetters and ordering must not be null");
        }
        if (missingDeadLetterTopic == null) {
            throw new MessagingConfigException("missingDeadLetterTopic must not be null (FAIL or CREATE)");
        }
        ConfigRules.refuseOwnDeadLetters(topics, deadLetters);
        consumerProperties = ConfigRules.properties("consumerProperty", consumerProperties,
                ConfigRules.OWNED_CONSUMER_PROPERTIES);
        producerProperties = ConfigRules.properties("producerProperty", producerProperties,
                ConfigRules.OWNED_PRODUCER_PROPERTIES);
        ClientSettings.check(bootstrapServers, groupId, polling.maxPollRecords(), brokerRetry.timeout(),
                consumerProperties, producerProperties);
        listeners = ConfigRules.listeners(listeners);
    }

    /**
     * A builder with every default. Defaults are the {@code DEFAULT_*} constants; the consumer
     * starts from the earliest offset when the group has none ({@code auto.offset.reset=earliest},
     * overridable).
     *
     * @param bootstrapServers {@code host:port[,host:port]}
     * @param groupId the consumer group
     */
    public static KafkaSourceConfigBuilder builder(String bootstrapServers, String groupId) {
        return new KafkaSourceConfigBuilder(bootstrapServers, groupId);
    }

    /** One line with every effective setting (no property values, which may hold secrets). */
    public String describe() {
        return "kafka source '" + name + "': bootstrap=" + bootstrapServers + " group=" + groupId
                + (topicPattern != null ? " pattern=" + topicPattern : " topics=" + topics)
                + " pollTimeout=" + polling.pollTimeout().toMillis() + "ms maxPollRecords=" + polling.maxPollRecords()
                + " bufferSize=" + polling.bufferSize() + " retryHoldBytes=" + polling.retryHoldBytes()
                + " commitInterval=" + commits.interval().toMillis()
                + "ms drainTimeout=" + commits.drainTimeout().toMillis() + "ms brokerRetry=" + brokerRetry.retry()
                + " brokerOperationTimeout=" + brokerRetry.timeout().toMillis() + "ms deadLetters="
                + (deadLetters instanceof DeadLetterPolicy.LogAndCommit
                        ? "log-and-commit"
                        : "topic missingDeadLetterTopic=" + missingDeadLetterTopic)
                + " ordering=" + ordering + " leaveGroupOnClose=" + leaveGroupOnClose
                + " consumerProperties=" + consumerProperties.keySet()
                + " producerProperties=" + producerProperties.keySet();
    }
}
