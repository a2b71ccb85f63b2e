package dev.waymark.subscription;

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
 * Configures a subscription. Defaults are the constants below; invalid values fail at
 * {@link #start(EventHandler)} or {@link #openAckStream(int)} with a message naming the option.
 */
public final class SubscriptionBuilder {

    /** Default events per read. */
    public static final int DEFAULT_BATCH_SIZE = 100;
    /** Default longest wait for new events without a wake-up. */
    public static final Duration DEFAULT_POLL_INTERVAL = Duration.ofSeconds(1);

    private static final Logger log = LoggerFactory.getLogger(SubscriptionBuilder.class);

    private final EventStore store;
    private final String name;
    private final Target target;
    private Partition partition = Partition.WHOLE;
    private Set<String> eventTypes = Set.of();
    private StartPosition start = StartPosition.checkpointOrBeginning();
    private int batchSize = DEFAULT_BATCH_SIZE;
    private RetryPolicy retry = RetryPolicy.defaults();
    private CheckpointPolicy checkpoint = CheckpointPolicy.defaults();
    private Duration pollInterval = DEFAULT_POLL_INTERVAL;
    private LeaseFence fence;
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
     */
    public SubscriptionBuilder consumerGroup(int member, int size) {
        this.partition = Partition.of(member, size);
        return this;
    }

    /**
     * Deliver only these event types; others are skipped (the checkpoint still moves past them).
     *
     * @throws SubscriptionConfigException if {@code types} is null or holds a null or blank type
     */
    public SubscriptionBuilder eventTypes(String... types) {
        if (types == null) {
            throw new SubscriptionConfigException("eventTypes must not be null");
        }
        for (String type : types) {
            if (type == null || type.isBlank()) {
                throw new SubscriptionConfigException("eventTypes must not hold a null or blank type, got "
                        + Arrays.toString(types));
            }
        }
        this.eventTypes = new HashSet<>(Arrays.asList(types));
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

    /** The retry budget; default {@link RetryPolicy#defaults()}. */
    public SubscriptionBuilder retry(int maxAttempts, Duration errorDelay) {
        this.retry = new RetryPolicy(maxAttempts, errorDelay);
        return this;
    }

    /** How often to write the checkpoint; default {@link CheckpointPolicy#defaults()}. */
    public SubscriptionBuilder checkpointEvery(int events, Duration interval) {
        this.checkpoint = new CheckpointPolicy(events, interval);
        return this;
    }

    /** The longest wait for new events without a wake-up, 10 ms to 1 h; default 1 s. */
    public SubscriptionBuilder pollInterval(Duration interval) {
        this.pollInterval = interval;
        return this;
    }

    /** Condition every checkpoint write on a lease (used by sharded pools). */
    public SubscriptionBuilder fence(LeaseFence fence) {
        this.fence = fence;
        return this;
    }

    /** Observe the subscription. */
    public SubscriptionBuilder listener(SubscriptionListener listener) {
        this.listener = listener == null ? SubscriptionListener.NONE : listener;
        return this;
    }

    /** The validated configuration. */
    public SubscriptionConfig config() {
        return new SubscriptionConfig(name, target, partition, eventTypes, start, batchSize, retry, checkpoint,
                pollInterval, fence);
    }

    /** Validates and starts the subscription on its own thread. */
    public Subscription start(EventHandler handler) {
        if (handler == null) {
            throw new SubscriptionConfigException("handler must not be null");
        }
        SubscriptionConfig config = config();
        log.info("waymark subscription {}: target={}, member={}, eventTypes={}, start={}, batchSize={}, retry={},"
                        + " checkpoint={}, pollInterval={}ms, fenced={}", config.name(), config.target(),
                config.partition(), config.eventTypes().isEmpty() ? "all" : config.eventTypes(), config.start(),
                config.batchSize(), config.retry(), config.checkpoint(), config.pollInterval().toMillis(),
                config.fence() != null);
        return new SubscriptionWorker(store, config, handler, listener).start();
    }

    /**
     * Starts the subscription as a pull-based stream of deliveries: the subscription does not move
     * past an item until it is answered, and closing the stream stops the subscription without
     * acknowledging the item in flight.
     *
     * @param buffer the queue size, {@code >= 1}
     */
    public AckStream openAckStream(int buffer) {
        if (buffer < 1) {
            throw new SubscriptionConfigException("ack stream buffer must be >= 1, got " + buffer);
        }
        AckQueue queue = new AckQueue(buffer);
        Subscription subscription = start(queue);
        queue.attach(subscription);
        return queue;
    }
}
