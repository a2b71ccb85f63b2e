package dev.waymark.kafka;

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
 * Builds a {@link KafkaSourceConfig}, from {@link KafkaSourceConfig#builder(String, String)}. Every
 * setter may be called in any order and only records its value; {@link #build()} validates them all
 * and throws {@link MessagingConfigException} naming the option, the value and the rule. The
 * defaults are the {@code DEFAULT_*} constants of {@link KafkaSourceConfig}; {@link KafkaSource#of}
 * logs the effective configuration in one line.
 */
public final class KafkaSourceConfigBuilder {
    private final String bootstrapServers;
    private final String groupId;
    private String name;
    private final List<String> topics = new ArrayList<>();
    private Pattern topicPattern;
    private Duration pollTimeout = KafkaSourceConfig.DEFAULT_POLL_TIMEOUT;
    private int maxPollRecords = KafkaSourceConfig.DEFAULT_MAX_POLL_RECORDS;
    private Integer bufferSize;
    private long retryHoldBytes = KafkaSourceConfig.DEFAULT_RETRY_HOLD_BYTES;
    private Duration commitInterval = KafkaSourceConfig.DEFAULT_COMMIT_INTERVAL;
    private Duration drainTimeout = KafkaSourceConfig.DEFAULT_DRAIN_TIMEOUT;
    private RetryPolicy brokerRetry = KafkaSourceConfig.DEFAULT_BROKER_RETRY;
    private Duration brokerTimeout = KafkaSourceConfig.DEFAULT_BROKER_TIMEOUT;
    private DeadLetterPolicy deadLetters = DeadLetterPolicy.topicSuffix(KafkaSourceConfig.DEFAULT_DEAD_LETTER_SUFFIX);
    private MissingDeadLetterTopic missingDeadLetterTopic = KafkaSourceConfig.DEFAULT_MISSING_DEAD_LETTER_TOPIC;
    private KafkaOrdering ordering = KafkaSourceConfig.DEFAULT_ORDERING;
    private final Map<String, String> consumerProperties = new LinkedHashMap<>();
    private boolean leaveGroupOnClose = KafkaSourceConfig.DEFAULT_LEAVE_GROUP_ON_CLOSE;
    private final Map<String, String> producerProperties = new LinkedHashMap<>();
    private final List<KafkaSourceListener> listeners = new ArrayList<>();

    KafkaSourceConfigBuilder(String bootstrapServers, String groupId) {
        this.bootstrapServers = bootstrapServers;
        this.groupId = groupId;
    }

    /** The source's name in logs and metrics; default {@code kafka:<topics or pattern>}. */
    public KafkaSourceConfigBuilder name(String name) {
        this.name = name;
        return this;
    }

    /** Subscribe to these topics (adds to earlier calls). */
    public KafkaSourceConfigBuilder topics(String... topics) {
        return topics(topics == null ? null : Arrays.asList(topics));
    }

    /** Subscribe to these topics (adds to earlier calls). */
    public KafkaSourceConfigBuilder topics(List<String> topics) {
        if (topics == null) {
            throw new MessagingConfigException("topics must not be null");
        }
        this.topics.addAll(topics); // a null or blank topic is refused by build()
        return this;
    }

    /** Subscribe to every topic matching the pattern (instead of a list). */
    public KafkaSourceConfigBuilder topicPattern(Pattern pattern) {
        this.topicPattern = pattern;
        return this;
    }

    /** How long an idle poll waits, 1 ms to 60 s; default 500 ms. */
    public KafkaSourceConfigBuilder pollTimeout(Duration timeout) {
        this.pollTimeout = timeout;
        return this;
    }

    /** Records per poll ({@code max.poll.records}), 1 to 100000; default 500. */
    public KafkaSourceConfigBuilder maxPollRecords(int records) {
        this.maxPollRecords = records;
        return this;
    }

    /** Records fetched ahead of the processor before fetching pauses, >= maxPollRecords; default max(2000, 4 x maxPollRecords). */
    public KafkaSourceConfigBuilder bufferSize(int records) {
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
    public KafkaSourceConfigBuilder retryHoldBytes(long bytes) {
        this.retryHoldBytes = bytes;
        return this;
    }

    /**
     * How often acknowledged offsets are committed (also on revoke and shutdown), 10 ms to 60 s;
     * default 1 s.
     */
    public KafkaSourceConfigBuilder commitInterval(Duration interval) {
        this.commitInterval = interval;
        return this;
    }

    /** How long {@code shutdown()} waits for outstanding acknowledgements before the final commit, 0 to 10 min; default 30 s. */
    public KafkaSourceConfigBuilder drainTimeout(Duration timeout) {
        this.drainTimeout = timeout;
        return this;
    }

    /**
     * How a retriable poll or commit failure is retried: 1 to 100 attempts, delays at most 60 s;
     * default {@link KafkaSourceConfig#DEFAULT_BROKER_RETRY} (5 attempts, 200 ms doubling up to 5 s, jittered). A
     * dead-letter publish is one attempt bounded by {@link #brokerOperationTimeout}.
     */
    public KafkaSourceConfigBuilder brokerRetry(RetryPolicy policy) {
        this.brokerRetry = policy;
        return this;
    }

    /** Time one broker attempt (a commit, a dead-letter publish) may take, 100 ms to 5 min; default 10 s. */
    public KafkaSourceConfigBuilder brokerOperationTimeout(Duration timeout) {
        this.brokerTimeout = timeout;
        return this;
    }

    /** What a dead-letter decision does; default {@code DeadLetterPolicy.topicSuffix(".DLT")}. */
    public KafkaSourceConfigBuilder deadLetters(DeadLetterPolicy policy) {
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
    public KafkaSourceConfigBuilder missingDeadLetterTopic(MissingDeadLetterTopic action) {
        this.missingDeadLetterTopic = action;
        return this;
    }

    /** What the ordering key is; default {@link KafkaSourceConfig#DEFAULT_ORDERING} ({@link KafkaOrdering#KEY}). */
    public KafkaSourceConfigBuilder ordering(KafkaOrdering ordering) {
        this.ordering = ordering;
        return this;
    }

    /**
     * An extra consumer property (security, {@code client.id}, {@code auto.offset.reset}, ...);
     * {@link #build()} checks it as the consumer will.
     */
    public KafkaSourceConfigBuilder consumerProperty(String key, String value) {
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
    public KafkaSourceConfigBuilder leaveGroupOnClose(boolean leave) {
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
    public KafkaSourceConfigBuilder producerProperty(String key, String value) {
        this.producerProperties.put(key, value);
        return this;
    }

    /** Adds an observer of source events (for example {@code KafkaSourceMetrics}). */
    public KafkaSourceConfigBuilder listener(KafkaSourceListener listener) {
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
        int buffer = bufferSize != null
                ? bufferSize
                : Math.max(KafkaSourceConfig.DEFAULT_BUFFER_SIZE, 4 * maxPollRecords);
        return new KafkaSourceConfig(effectiveName, bootstrapServers, groupId, topics, topicPattern,
                new KafkaSourceConfig.Polling(pollTimeout, maxPollRecords, buffer, retryHoldBytes),
                new KafkaSourceConfig.Commits(commitInterval, drainTimeout),
                new KafkaSourceConfig.BrokerRetry(brokerRetry, brokerTimeout), deadLetters, missingDeadLetterTopic,
                ordering,
                consumerProperties, leaveGroupOnClose, producerProperties, listeners);
    }
}
