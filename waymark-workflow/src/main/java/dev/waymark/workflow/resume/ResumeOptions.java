package dev.waymark.workflow.resume;

import dev.waymark.core.RetryPolicy;
import dev.waymark.workflow.exception.WorkflowConfigException;
import dev.waymark.workflow.WorkflowEngine;
import dev.waymark.workflow.internal.Advancer;
import dev.waymark.workflow.internal.Args;
import java.time.Duration;

/**
 * Options of a {@link ResumeWorker}: immutable, made by {@link #builder()} (or {@link #defaults()}),
 * changed by {@link #toBuilder()}. {@link Builder#build()} validates every option and names the
 * option, its value and the rule in the error: a {@link WorkflowConfigException}. Each
 * default is a {@code DEFAULT_} constant of this class; {@link #toString()} is the effective
 * configuration in one line (the worker logs it when it starts).
 */
public final class ResumeOptions {

    /**
     * The default {@link #pollInterval()}: the longest wait between the end of a pass and the next pass.
     */
    public static final Duration DEFAULT_POLL_INTERVAL = Duration.ofSeconds(1);

    /**
     * The default {@link #retry()}, the engine's ({@link WorkflowEngine#DEFAULT_RETRY}: 5 attempts, 2 s
     * doubling to 64 s after each crash).
     */
    public static final RetryPolicy DEFAULT_RETRY = WorkflowEngine.DEFAULT_RETRY;

    /** The default {@link #leaseTtl()}, the engine's ({@link WorkflowEngine#DEFAULT_LEASE_TTL}, 30 s). */
    public static final Duration DEFAULT_LEASE_TTL = WorkflowEngine.DEFAULT_LEASE_TTL;

    /** The default {@link #batchLimit()}: most instances one pass claims. */
    public static final int DEFAULT_BATCH_LIMIT = 100;

    /** The default {@link #concurrency()}: most attempts one worker has in flight at once. */
    public static final int DEFAULT_CONCURRENCY = 64;

    /** The default {@link #push()}: the loop also wakes on the store's wake signal. */
    public static final boolean DEFAULT_PUSH = true;

    /** The default {@link #cascadeRepairInterval()}. */
    public static final Duration DEFAULT_CASCADE_REPAIR_INTERVAL = Duration.ofSeconds(60);

    /** Most instances one pass may claim. */
    public static final int MAX_BATCH_LIMIT = 10_000;

    /** Most attempts one worker may have in flight. */
    public static final int MAX_CONCURRENCY = 1024;

    private final Duration pollInterval;
    private final RetryPolicy retry;
    private final Duration leaseTtl;
    private final int batchLimit;
    private final int concurrency;
    private final boolean push;
    private final Duration cascadeRepairInterval;
    private final ResumeListener listener;

    private ResumeOptions(Builder b) {
        this.pollInterval = b.pollInterval;
        this.retry = b.retry;
        this.leaseTtl = b.leaseTtl;
        this.batchLimit = b.batchLimit;
        this.concurrency = b.concurrency;
        this.push = b.push;
        this.cascadeRepairInterval = b.cascadeRepairInterval;
        this.listener = b.listener;
    }

    /** A builder holding every default. */
    public static Builder builder() {
        return new Builder();
    }

    /** The defaults ({@code builder().build()}). */
    public static ResumeOptions defaults() {
        return builder().build();
    }

    /** A builder holding these options, to change some of them. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.pollInterval = pollInterval;
        b.retry = retry;
        b.leaseTtl = leaseTtl;
        b.batchLimit = batchLimit;
        b.concurrency = concurrency;
        b.push = push;
        b.cascadeRepairInterval = cascadeRepairInterval;
        b.listener = listener;
        return b;
    }

    /**
     * The longest wait between the end of a pass and the next pass. Without {@link #push()} the loop
     * waits exactly this. With it, the wait also ends when the store's {@link dev.waymark.store.WakeSignal}
     * fires: after every append through the store handle (a start, a settlement, a retry, a workflow's
     * end, any event of the application's), on NOTIFY of another handle's append (one per
     * {@code notifyWindow}), and on the store's fallback tick ({@code EventStoreBuilder.fallbackPoll},
     * 1 s by default); so an idle pushed worker passes every {@code min(pollInterval, fallbackPoll)},
     * and a busy store starts a pass after each of its appends.
     */
    public Duration pollInterval() {
        return pollInterval;
    }

    /**
     * Crashes of an attempt: {@code retry().maxAttempts()} attempts before the workflow is marked failed,
     * the n-th crash followed by {@code retry().delayBefore(n)}.
     */
    public RetryPolicy retry() {
        return retry;
    }

    /**
     * Lease of a claimed instance; renewed every third of it while the attempt runs. A crashed
     * worker's instances are taken over about this long after its last renewal.
     */
    public Duration leaseTtl() {
        return leaseTtl;
    }

    /** Most due instances one pass claims (one statement), oldest due first. */
    public int batchLimit() {
        return batchLimit;
    }

    /**
     * Most attempts in flight at once, on virtual threads: the started loop claims only as many due
     * instances as it has free slots, so the attempts in flight follow the backlog up to this bound;
     * each attempt holds a pooled connection only while one of its statements runs (see
     * docs/OPERATIONS.md for sizing the pool).
     */
    public int concurrency() {
        return concurrency;
    }

    /** Whether the loop also wakes on the store's wake signal (see {@link #pollInterval()}). */
    public boolean push() {
        return push;
    }

    /**
     * How often the worker looks for cancellation cascades a crash cut short and finishes them (the
     * first pass included).
     */
    public Duration cascadeRepairInterval() {
        return cascadeRepairInterval;
    }

    /** Receives log events and per-pass summaries (SLF4J by default). */
    public ResumeListener listener() {
        return listener;
    }

    /** Equal when every option is equal (the listener by {@code equals}). */
    @Override
    public boolean equals(Object o) {
        return o instanceof ResumeOptions r && pollInterval.equals(r.pollInterval) && retry.equals(r.retry)
                && leaseTtl.equals(r.leaseTtl) && batchLimit == r.batchLimit && concurrency == r.concurrency
                && push == r.push && cascadeRepairInterval.equals(r.cascadeRepairInterval)
                && listener.equals(r.listener);
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(pollInterval, retry, leaseTtl, batchLimit, concurrency, push,
                cascadeRepairInterval, listener);
    }

    /** The effective configuration in one line. */
    @Override
    public String toString() {
        return "ResumeOptions[pollInterval=" + pollInterval + ", retry=" + retry + ", leaseTtl=" + leaseTtl
                + ", batchLimit=" + batchLimit + ", concurrency=" + concurrency + ", push=" + push
                + ", cascadeRepairInterval=" + cascadeRepairInterval
                + ", listener=" + (listener == ResumeListener.LOGGING ? "LOGGING" : listener.getClass().getName())
                + "]";
    }

    /**
     * Builds {@link ResumeOptions}. Setters only record; {@link #build()} validates. Not thread-safe.
     */
    public static final class Builder {
        private Duration pollInterval = DEFAULT_POLL_INTERVAL;
        private RetryPolicy retry = DEFAULT_RETRY;
        private Duration leaseTtl = DEFAULT_LEASE_TTL;
        private int batchLimit = DEFAULT_BATCH_LIMIT;
        private int concurrency = DEFAULT_CONCURRENCY;
        private boolean push = DEFAULT_PUSH;
        private Duration cascadeRepairInterval = DEFAULT_CASCADE_REPAIR_INTERVAL;
        private ResumeListener listener = ResumeListener.LOGGING;

        private Builder() {}

        /** See {@link ResumeOptions#pollInterval()}; must be positive (default {@link #DEFAULT_POLL_INTERVAL}). */
        public Builder pollInterval(Duration v) {
            this.pollInterval = v;
            return this;
        }

        /**
         * See {@link ResumeOptions#retry()} (default {@link #DEFAULT_RETRY}). The database computes the
         * backoff as it records a crash, so the policy must double and have no jitter: use
         * {@link RetryPolicy#exponential}.
         */
        public Builder retry(RetryPolicy v) {
            this.retry = v;
            return this;
        }

        /** See {@link ResumeOptions#leaseTtl()}; at least 30 ms (default {@link #DEFAULT_LEASE_TTL}). */
        public Builder leaseTtl(Duration v) {
            this.leaseTtl = v;
            return this;
        }

        /** See {@link ResumeOptions#batchLimit()}; 1 to {@link #MAX_BATCH_LIMIT} (default {@link #DEFAULT_BATCH_LIMIT}). */
        public Builder batchLimit(int v) {
            this.batchLimit = v;
            return this;
        }

        /** See {@link ResumeOptions#concurrency()}; 1 to {@link #MAX_CONCURRENCY} (default {@link #DEFAULT_CONCURRENCY}). */
        public Builder concurrency(int v) {
            this.concurrency = v;
            return this;
        }

        /** See {@link ResumeOptions#push()} (default {@link #DEFAULT_PUSH}). */
        public Builder push(boolean v) {
            this.push = v;
            return this;
        }

        /** See {@link ResumeOptions#cascadeRepairInterval()}; positive (default {@link #DEFAULT_CASCADE_REPAIR_INTERVAL}). */
        public Builder cascadeRepairInterval(Duration v) {
            this.cascadeRepairInterval = v;
            return this;
        }

        /** See {@link ResumeOptions#listener()}; not null (default {@link ResumeListener#LOGGING}). */
        public Builder listener(ResumeListener v) {
            this.listener = v;
            return this;
        }

        /**
         * The options.
         *
         * @throws WorkflowConfigException naming the first option out of range, its value and the rule
         */
        public ResumeOptions build() {
            positive(pollInterval, "pollInterval");
            positive(leaseTtl, "leaseTtl");
            positive(cascadeRepairInterval, "cascadeRepairInterval");
            Advancer.Policy.of(retry, "retry");
            if (batchLimit < 1 || batchLimit > MAX_BATCH_LIMIT) {
                throw new WorkflowConfigException(
                        "batchLimit must be in [1, " + MAX_BATCH_LIMIT + "], got " + batchLimit);
            }
            if (concurrency < 1 || concurrency > MAX_CONCURRENCY) {
                throw new WorkflowConfigException(
                        "concurrency must be in [1, " + MAX_CONCURRENCY + "], got " + concurrency);
            }
            if (leaseTtl.toMillis() < 30) {
                throw new WorkflowConfigException("leaseTtl must be >= 30 ms, got " + leaseTtl);
            }
            Args.option(listener, "listener");
            return new ResumeOptions(this);
        }

        private static void positive(Duration d, String what) {
            if (d == null || d.isNegative() || d.isZero()) {
                throw new WorkflowConfigException(what + " must be > 0, got " + d);
            }
        }
    }
}
