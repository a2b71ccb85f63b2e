package dev.waymark.subscription;

import dev.waymark.core.RetryPolicy;
import dev.waymark.store.EventStore;
import dev.waymark.store.Partition;
import dev.waymark.subscription.internal.AckQueue;
import dev.waymark.subscription.internal.SubscriptionWorker;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Configures a subscription. Defaults are the constants below. The setters only record their
 * values: every invalid value fails later, at {@link #config()}, {@link #start(EventHandler)} or
 * {@link #openAckStream()}, with a {@link SubscriptionConfigException} naming the option, the
 * value and the rule.
 */
public final class SubscriptionBuilder {

    /** Default events per read. */
    public static final int DEFAULT_BATCH_SIZE = 100;
    /** Default longest wait for new events without a wake-up. */
    public static final Duration DEFAULT_POLL_INTERVAL = Duration.ofSeconds(1);
    /** Default time a handler may run, with no stop requested, before it is reported as stuck: 60 s. */
    public static final Duration DEFAULT_STUCK_HANDLER_THRESHOLD = Duration.ofSeconds(60);
    /** Default handler retry: 5 deliveries in all, 1 s apart ({@code RetryPolicy.fixed(5, 1 s)}). */
    public static final RetryPolicy DEFAULT_RETRY = RetryPolicy.fixed(5, Duration.ofSeconds(1));

    private static final Logger log = LoggerFactory.getLogger(SubscriptionBuilder.class);

    private final EventStore store;
    private final String name;
    private final Target target;
    private int groupMember = Partition.WHOLE.member();
    private int groupSize = Partition.WHOLE.size();
    private Set<String> eventTypes = Set.of();
    private StartPosition start = StartPosition.checkpointOrBeginning();
    private int batchSize = DEFAULT_BATCH_SIZE;
    private RetryPolicy retry = DEFAULT_RETRY;
    private int checkpointEvents = CheckpointPolicy.DEFAULT_EVERY_EVENTS;
    private Duration checkpointInterval = CheckpointPolicy.DEFAULT_EVERY;
    private Duration pollInterval = DEFAULT_POLL_INTERVAL;
    private LeaseFence fence;
    private Duration stuckHandlerThreshold = DEFAULT_STUCK_HANDLER_THRESHOLD;
    private SubscriptionListener listener = SubscriptionListener.NONE;

    SubscriptionBuilder(EventStore store, String name, Target target) {
        if (store == null) {
            throw new SubscriptionConfigException("store must not be null");
        }
        this.store = store;
        this.name = name;
        this.target = target;
    }

    /**
     * Read as member {@code member} of a consumer group of {@code size}; each member keeps its own
     * checkpoint, stored with the group's size. A member started from its checkpoint (the
     * {@code checkpointOr...} start positions) whose subscription has checkpoints written by a group
     * of another size (a plain subscription is a group of 1) stops before delivering anything with a
     * {@link ConsumerGroupSizeMismatchException}: member {@code i} of one size and of another read
     * different streams, and resuming would skip events. Resize as the exception's message says.
     * Valid: {@code size >= 1}, {@code 0 <= member < size}.
     */
    public SubscriptionBuilder consumerGroup(int member, int size) {
        this.groupMember = member;
        this.groupSize = size;
        return this;
    }

    /**
     * Deliver only these event types; others are skipped (the checkpoint still moves past them).
     * Valid: not null, no null or blank type.
     */
    public SubscriptionBuilder eventTypes(String... types) {
        this.eventTypes = types == null ? null : new HashSet<>(Arrays.asList(types));
        return this;
    }

    /** Where to start; default {@link StartPosition#checkpointOrBeginning()}. */
    public SubscriptionBuilder startFrom(StartPosition start) {
        this.start = start;
        return this;
    }

    /** Events per read, 1 to 10000; default {@value #DEFAULT_BATCH_SIZE}. */
    public SubscriptionBuilder batchSize(int batchSize) {
        this.batchSize = batchSize;
        return this;
    }

    /**
     * How a handler failure is retried: {@link RetryPolicy#maxAttempts()} deliveries of one event in
     * all before it is dead-lettered with {@link dev.waymark.core.DeadLetterReason.MaxAttempts}, and
     * after a handler exception the pause {@link RetryPolicy#delayBefore(int, java.util.random.RandomGenerator)}
     * before the next delivery ({@link Ack#retry(Duration)} keeps its own delay and counts as an
     * attempt). Not null; default {@link #DEFAULT_RETRY}.
     */
    public SubscriptionBuilder retry(RetryPolicy policy) {
        this.retry = policy;
        return this;
    }

    /** How often to write the checkpoint, valid as {@link CheckpointPolicy} says; default {@link CheckpointPolicy#defaults()}. */
    public SubscriptionBuilder checkpointEvery(int events, Duration interval) {
        this.checkpointEvents = events;
        this.checkpointInterval = interval;
        return this;
    }

    /** The longest wait for new events without a wake-up, 10 ms to 1 h; default 1 s. */
    public SubscriptionBuilder pollInterval(Duration interval) {
        this.pollInterval = interval;
        return this;
    }

    /**
     * How long one handler call may run, with no stop requested, before it is reported as stuck:
     * one WARN line naming the subscription, the event and how long, and
     * {@link SubscriptionListener#handlerStuck} (the {@code waymark.subscription.stuck_handlers}
     * gauge of {@link dev.waymark.subscription.micrometer.SubscriptionMetrics}); its return is
     * reported too ({@link SubscriptionListener#handlerUnstuck}). The subscription makes no progress
     * meanwhile, and nothing else would show it. Checked by a watchdog (a virtual thread per
     * subscription) every quarter of the threshold at least. 10 ms to 24 h; default
     * {@link #DEFAULT_STUCK_HANDLER_THRESHOLD} (60 s).
     */
    public SubscriptionBuilder stuckHandlerThreshold(Duration threshold) {
        this.stuckHandlerThreshold = threshold;
        return this;
    }

    /** Condition every checkpoint write on a lease (used by sharded pools). */
    public SubscriptionBuilder fence(LeaseFence fence) {
        this.fence = fence;
        return this;
    }

    /**
     * Observe the subscription; default {@link SubscriptionListener#NONE}.
     *
     * <p>Not null (pass {@link SubscriptionListener#NONE} for none): a null fails at start, as every
     * invalid option does.
     */
    public SubscriptionBuilder listener(SubscriptionListener listener) {
        this.listener = listener;
        return this;
    }

    /**
     * The validated configuration.
     *
     * @throws SubscriptionConfigException naming the first invalid option
     */
    public SubscriptionConfig config() {
        if (groupSize < 1) {
            throw new SubscriptionConfigException("consumerGroup size must be >= 1, got " + groupSize);
        }
        if (groupMember < 0 || groupMember >= groupSize) {
            throw new SubscriptionConfigException("consumerGroup member must be in [0, " + groupSize + "), got "
                    + groupMember);
        }
        if (listener == null) {
            throw new SubscriptionConfigException("listener must not be null (SubscriptionListener.NONE for none)");
        }
        if (retry == null) {
            throw new SubscriptionConfigException("retry must not be null");
        }
        return new SubscriptionConfig(name, target, Partition.of(groupMember, groupSize), eventTypes, start,
                batchSize, retry,
                new CheckpointPolicy(checkpointEvents, checkpointInterval), pollInterval, fence, stuckHandlerThreshold);
    }

    /** Validates and starts the subscription on its own thread. */
    public Subscription start(EventHandler handler) {
        if (handler == null) {
            throw new SubscriptionConfigException("handler must not be null");
        }
        SubscriptionConfig config = config();
        log.info("waymark subscription {}: target={}, member={}, eventTypes={}, start={}, batchSize={}, retry={},"
                + " checkpoint={}, pollInterval={}ms, stuckHandlerThreshold={}ms, fenced={}", config.name(),
                config.target(), config.partition(), config.eventTypes().isEmpty() ? "all" : config.eventTypes(),
                config.start(), config.batchSize(), config.retry(), config.checkpoint(),
                config.pollInterval().toMillis(),
                config.stuckHandlerThreshold().toMillis(), config.fence() != null);
        return new SubscriptionWorker(store, config, handler, listener).start();
    }

    /**
     * Starts the subscription as a pull-based stream of deliveries: the subscription hands over one
     * delivery at a time and does not move past it until it is answered, and closing the stream
     * stops the subscription without acknowledging the item in flight. Since the subscription waits
     * for each answer, at most one item is ever waiting to be taken (so there is no buffer to size).
     */
    public AckStream openAckStream() {
        AckQueue queue = new AckQueue(1);
        Subscription subscription = start(queue);
        queue.attach(subscription);
        return queue;
    }
}
