package dev.waymark.kafka;

import dev.waymark.kafka.internal.ClientSettings;
import static dev.waymark.kafka.ConfigRules.requireBetween;
import static dev.waymark.kafka.ConfigRules.requireText;

import dev.waymark.core.RetryPolicy;
import dev.waymark.messaging.MessagingConfigException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The validated, immutable configuration of a {@link KafkaSource}. Build it with
 * {@link #builder(String, String)}; {@link Builder#build()} rejects a bad value with a
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
    /** Default {@link Polling#bufferSize()}. */
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
    public static Builder builder(String bootstrapServers, String groupId) {
        return new Builder(bootstrapServers, groupId);
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

    /** Builds a {@link KafkaSourceConfig}; every setter may be called in any order, {@link #build()} validates. */
    public static final class Builder {
        private final String bootstrapServers;
        private final String groupId;
        private String name;
        private final List<String> topics = new ArrayList<>();
        private Pattern topicPattern;
        private Duration pollTimeout = DEFAULT_POLL_TIMEOUT;
        private int maxPollRecords = DEFAULT_MAX_POLL_RECORDS;
        private Integer bufferSize;
        private long retryHoldBytes = DEFAULT_RETRY_HOLD_BYTES;
        private Duration commitInterval = DEFAULT_COMMIT_INTERVAL;
        private Duration drainTimeout = DEFAULT_DRAIN_TIMEOUT;
        private RetryPolicy brokerRetry = DEFAULT_BROKER_RETRY;
        private Duration brokerTimeout = DEFAULT_BROKER_TIMEOUT;
        private DeadLetterPolicy deadLetters = DeadLetterPolicy.topicSuffix(DEFAULT_DEAD_LETTER_SUFFIX);
        private MissingDeadLetterTopic missingDeadLetterTopic = DEFAULT_MISSING_DEAD_LETTER_TOPIC;
        private KafkaOrdering ordering = KafkaOrdering.KEY;
        private final Map<String, String> consumerProperties = new LinkedHashMap<>();
        private boolean leaveGroupOnClose = DEFAULT_LEAVE_GROUP_ON_CLOSE;
        private final Map<String, String> producerProperties = new LinkedHashMap<>();
        private final List<KafkaSourceListener> listeners = new ArrayList<>();

        private Builder(String bootstrapServers, String groupId) {
            this.bootstrapServers = bootstrapServers;
            this.groupId = groupId;
        }

        /** The source's name in logs and metrics; default {@code kafka:<topics or pattern>}. */
        public Builder name(String name) {
            this.name = name;
            return this;
        }

        /** Subscribe to these topics (adds to earlier calls). */
        public Builder topics(String... topics) {
            return topics(topics == null ? null : Arrays.asList(topics));
        }

        /** Subscribe to these topics (adds to earlier calls). */
        public Builder topics(List<String> topics) {
            if (topics == null) {
                throw new MessagingConfigException("topics must not be null");
            }
            this.topics.addAll(topics); // a null or blank topic is refused by build()
            return this;
        }

        /** Subscribe to every topic matching the pattern (instead of a list). */
        public Builder topicPattern(Pattern pattern) {
            this.topicPattern = pattern;
            return this;
        }

        /** How long an idle poll waits, 1 ms to 60 s; default 500 ms. */
        public Builder pollTimeout(Duration timeout) {
            this.pollTimeout = timeout;
            return this;
        }

        /** Records per poll ({@code max.poll.records}), 1 to 100000; default 500. */
        public Builder maxPollRecords(int records) {
            this.maxPollRecords = records;
            return this;
        }

        /** Records fetched ahead of the processor before fetching pauses, >= maxPollRecords; default max(2000, 4 x maxPollRecords). */
        public Builder bufferSize(int records) {
            this.bufferSize = records;
            return this;
        }

        /**
         * Memory for records held behind retry barriers, 0 to 4 GiB; default 32 MiB. A retried
         * record is redelivered from memory after its delay, and the records its processor orders
         * after it (the rest of the partition under serial, its key under orderedByKey) wait in
         * memory behind it instead of being fetched again; other keys and partitions go on. Counted
         * as key and value bytes plus 128 bytes per record, for the whole source. Past it, the
         * partition falls back to seeking back (paused until it holds nothing); 0 makes every retry
         * seek back.
         */
        public Builder retryHoldBytes(long bytes) {
            this.retryHoldBytes = bytes;
            return this;
        }

        /**
         * How often acknowledged offsets are committed (also on revoke and shutdown), 10 ms to 60 s;
         * default 1 s.
         */
        public Builder commitInterval(Duration interval) {
            this.commitInterval = interval;
            return this;
        }

        /** How long {@code shutdown()} waits for outstanding acknowledgements before the final commit, 0 to 10 min; default 30 s. */
        public Builder drainTimeout(Duration timeout) {
            this.drainTimeout = timeout;
            return this;
        }

        /**
         * How a retriable poll or commit failure is retried: 1 to 100 attempts, delays at most 60 s;
         * default {@link #DEFAULT_BROKER_RETRY} (5 attempts, 200 ms doubling up to 5 s, jittered). A
         * dead-letter publish is one attempt bounded by {@link #brokerOperationTimeout}.
         */
        public Builder brokerRetry(RetryPolicy policy) {
            this.brokerRetry = policy;
            return this;
        }

        /** Time one broker attempt (a commit, a dead-letter publish) may take, 100 ms to 5 min; default 10 s. */
        public Builder brokerOperationTimeout(Duration timeout) {
            this.brokerTimeout = timeout;
            return this;
        }

        /** What a dead-letter decision does; default {@code DeadLetterPolicy.topicSuffix(".DLT")}. */
        public Builder deadLetters(DeadLetterPolicy policy) {
            this.deadLetters = policy;
            return this;
        }

        /**
         * What the source does when a dead-letter topic of its {@link #deadLetters policy} does not
         * exist; default {@link MissingDeadLetterTopic#FAIL}: it fails at start, before its consumer
         * joins the group, with a {@link DeadLetterTopicException} naming the topic.
         * {@link MissingDeadLetterTopic#CREATE} creates it instead. Ignored under
         * {@link DeadLetterPolicy#logAndCommit()}.
         */
        public Builder missingDeadLetterTopic(MissingDeadLetterTopic action) {
            this.missingDeadLetterTopic = action;
            return this;
        }

        /** What the ordering key is; default {@link KafkaOrdering#KEY}. */
        public Builder ordering(KafkaOrdering ordering) {
            this.ordering = ordering;
            return this;
        }

        /**
         * An extra consumer property (security, {@code client.id}, {@code auto.offset.reset}, ...);
         * {@link #build()} checks it as the consumer will.
         */
        public Builder consumerProperty(String key, String value) {
            this.consumerProperties.put(key, value);
            return this;
        }

        /**
         * Whether the consumer leaves its group when the source closes (shut down, closed or
         * failed); default true. True sends LeaveGroup also for a static member
         * ({@code group.instance.id}): its partitions move to the other members at once, and a
         * restart with the same instance id joins with a rebalance. False closes with the client's
         * default: a dynamic member still leaves, a static member keeps its partitions, unconsumed,
         * until {@code session.timeout.ms} runs out, so a restart within it gets them back without a
         * rebalance.
         */
        public Builder leaveGroupOnClose(boolean leave) {
            this.leaveGroupOnClose = leave;
            return this;
        }

        /**
         * An extra property of the dead-letter producer (security, {@code client.id}, ...);
         * {@link #build()} checks it as the producer will, and refuses {@code acks} other than
         * {@code all} (or {@code -1}) and {@code transactional.id}. Unless set,
         * {@code delivery.timeout.ms} is the broker operation timeout, raised to
         * {@code linger.ms + request.timeout.ms} when that is longer.
         */
        public Builder producerProperty(String key, String value) {
            this.producerProperties.put(key, value);
            return this;
        }

        /** Adds an observer of source events (for example {@code KafkaSourceMetrics}). */
        public Builder listener(KafkaSourceListener listener) {
            if (listener == null) {
                throw new MessagingConfigException("listener must not be null");
            }
            this.listeners.add(listener);
            return this;
        }

        /**
         * The configuration.
         *
         * @throws MessagingConfigException naming the bad option, its value and the rule
         */
        public KafkaSourceConfig build() {
            String effectiveName = name != null
                    ? name
                    : "kafka:" + (topicPattern != null ? topicPattern.pattern() : String.join(",", topics));
            int buffer = bufferSize != null ? bufferSize : Math.max(DEFAULT_BUFFER_SIZE, 4 * maxPollRecords);
            return new KafkaSourceConfig(effectiveName, bootstrapServers, groupId, topics, topicPattern,
                    new Polling(pollTimeout, maxPollRecords, buffer, retryHoldBytes),
                    new Commits(commitInterval, drainTimeout),
                    new BrokerRetry(brokerRetry, brokerTimeout), deadLetters, missingDeadLetterTopic,
                    ordering,
                    consumerProperties, leaveGroupOnClose, producerProperties, listeners);
        }
    }
}
