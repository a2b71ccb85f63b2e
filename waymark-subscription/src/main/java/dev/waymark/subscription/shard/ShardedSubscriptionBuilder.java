package dev.waymark.subscription.shard;

import dev.waymark.core.RetryPolicy;
import dev.waymark.store.EventStore;
import dev.waymark.store.RecordedEvent;
import dev.waymark.subscription.Ack;
import dev.waymark.subscription.SubscriptionConfigException;
import dev.waymark.subscription.Target;
import dev.waymark.subscription.shard.internal.ShardWorker;
import java.time.Duration;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Configures a sharded worker. Defaults are those of {@link ShardOptions}; invalid values fail at
 * {@link #start(ShardHandler)} with a message naming the option.
 */
public final class ShardedSubscriptionBuilder {

    private static final Logger log = LoggerFactory.getLogger(ShardedSubscriptionBuilder.class);

    private final EventStore store;
    private final String name;
    private final Target target;
    private int shards = -1;
    private Duration leaseTtl = ShardOptions.DEFAULT_LEASE_TTL;
    private Duration renewInterval = ShardOptions.DEFAULT_RENEW_INTERVAL;
    private int batchSize = ShardOptions.DEFAULT_BATCH_SIZE;
    private RetryPolicy retry = ShardOptions.DEFAULT_RETRY;
    private Duration stuckHandlerThreshold = ShardOptions.DEFAULT_STUCK_HANDLER_THRESHOLD;
    private ShardListener listener = ShardListener.NONE;

    ShardedSubscriptionBuilder(EventStore store, String name, Target target) {
        this.store = store;
        this.name = name;
        this.target = target;
    }

    /** The number of buckets (required), fixed per subscription. */
    public ShardedSubscriptionBuilder shards(int count) {
        this.shards = count;
        return this;
    }

    /** How long a lease lasts without renewal; default 30 s. */
    public ShardedSubscriptionBuilder leaseTtl(Duration ttl) {
        this.leaseTtl = ttl;
        return this;
    }

    /** Time between reconcile passes, shorter than the TTL; default 10 s. */
    public ShardedSubscriptionBuilder renewInterval(Duration interval) {
        this.renewInterval = interval;
        return this;
    }

    /** Events per read, 1 to 10000; default 100. */
    public ShardedSubscriptionBuilder batchSize(int size) {
        this.batchSize = size;
        return this;
    }

    /**
     * How a handler failure is retried in each bucket: {@link RetryPolicy#maxAttempts()} deliveries of
     * one event before it is dead-lettered, the policy's delay before redelivering after a handler
     * exception. Not null; default {@link ShardOptions#DEFAULT_RETRY} (5 deliveries, 1 s apart).
     */
    public ShardedSubscriptionBuilder retry(RetryPolicy policy) {
        this.retry = policy;
        return this;
    }

    /**
     * How long one handler call may run, with no stop requested, before its bucket is reported as
     * stuck: one WARN line naming the pool, the bucket, the event and how long,
     * {@link ShardListener#handlerStuck}, and {@link ShardStats#stuckReaders()} (the
     * {@code waymark.shard.stuck_readers} gauge) until it returns ({@link ShardListener#handlerUnstuck}).
     * 10 ms to 24 h; default {@link ShardOptions#DEFAULT_STUCK_HANDLER_THRESHOLD} (60 s).
     */
    public ShardedSubscriptionBuilder stuckHandlerThreshold(Duration threshold) {
        this.stuckHandlerThreshold = threshold;
        return this;
    }

    /**
     * Observe the worker; default {@link ShardListener#NONE}.
     *
     * @throws SubscriptionConfigException if {@code listener} is null (pass {@link ShardListener#NONE}
     *     for none)
     */
    public ShardedSubscriptionBuilder listener(ShardListener listener) {
        if (listener == null) {
            throw new SubscriptionConfigException("listener must not be null (ShardListener.NONE for none)");
        }
        this.listener = listener;
        return this;
    }

    /** The validated options. */
    public ShardOptions options() {
        return new ShardOptions(target, shards, leaseTtl, renewInterval, batchSize, retry,
                stuckHandlerThreshold);
    }

    /**
     * Validates, joins the pool and starts reading the buckets this worker comes to own. A database
     * that is unavailable at start does not fail it: the worker reports the failure to
     * {@link ShardListener#passFailed} (step {@code ensure shards}) and its passes retry until the
     * database is back.
     *
     * @throws SubscriptionConfigException on an invalid option
     * @throws ShardCountMismatchException when the pool is stored with another shard count
     * @throws dev.waymark.subscription.ConsumerGroupSizeMismatchException when the subscription's
     *     checkpoints were written by a group of another size (a plain subscription of the same name,
     *     a resize done halfway)
     */
    public ShardedSubscription start(ShardHandler handler) {
        if (store == null) {
            throw new SubscriptionConfigException("store must not be null");
        }
        if (handler == null) {
            throw new SubscriptionConfigException("handler must not be null");
        }
        dev.waymark.subscription.SubscriptionConfig probe = dev.waymark.subscription.Subscription.builder(store, name,
                target).config(); // validates the name and target the same way as a plain subscription
        ShardOptions options = options();
        String workerId = "w-" + UUID.randomUUID().toString().substring(0, 13);
        log.info("waymark sharded subscription {}: worker={}, target={}, shards={}, leaseTtl={}ms, renewInterval={}ms,"
                + " batchSize={}, retry={}, stuckHandlerThreshold={}ms", probe.name(),
                workerId, options.target(), options.shardCount(), options.leaseTtl().toMillis(),
                options.renewInterval().toMillis(), options.batchSize(), options.retry(),
                options.stuckHandlerThreshold().toMillis());
        return new ShardWorker(store, name, workerId, options, handler, listener).start();
    }
}
