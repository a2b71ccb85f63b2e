package dev.waymark.messaging;

import dev.waymark.core.RetryPolicy;
import dev.waymark.core.Stoppable;
import dev.waymark.core.WaymarkInputException;
import dev.waymark.messaging.internal.ProcessorRuntime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Several processors under one lifecycle: start, wait, stop with a drain timeout then a forced
 * stop, a failure strategy, per-processor state and health. Each processor has its own source,
 * bounded inbox, threads and counters.
 *
 * <p>Lifecycle: {@link #builder()}{@code …build()} validates and touches no source;
 * {@link #start()} starts every processor, once (a later call starts nothing more); {@link #stop}
 * and {@link #close()} stop it, once (later calls answer for the same stop). A stopped app is not
 * started again, like every Waymark component: {@code start()} after {@code stop} throws
 * {@link IllegalStateException}; build a new app (with new sources) instead. An app stopped before
 * it was started ends at once: each source's {@code shutdown()} is called and no processor runs.
 */
public final class ProcessingApp implements Stoppable {

    /** Default inbox size per processor. */
    public static final int DEFAULT_INBOX_SIZE = 100;
    /** Default drain timeout of {@link #stop()}. */
    public static final Duration DEFAULT_DRAIN_TIMEOUT = Duration.ofSeconds(30);
    /** Default time without progress, with work waiting, after which a processor counts as stuck. */
    public static final Duration DEFAULT_STUCK_AFTER = Duration.ofMinutes(5);
    /** Default {@link ProcessingAppBuilder#failureStrategy}: a failed processor stops alone, the others keep running. */
    public static final FailureStrategy DEFAULT_FAILURE_STRATEGY = FailureStrategy.ISOLATE;
    /** Default total timeout of {@link #stop()}. */
    public static final Duration DEFAULT_TOTAL_TIMEOUT = Duration.ofSeconds(60);
    /**
     * Default retry when a handler throws: for ever, 1 s apart. Not without a delay: a message whose
     * handler always throws would be a tight loop (for Kafka a seek and a fetch, and a warning logged,
     * thousands of times a second).
     */
    public static final RetryPolicy DEFAULT_RETRY = RetryPolicy.fixed(RetryPolicy.UNLIMITED, Duration.ofSeconds(1));

    private static final Logger log = LoggerFactory.getLogger(ProcessingApp.class);

    private final List<ProcessorRuntime> processors;
    private final FailureStrategy strategy;
    private final AtomicBoolean failureReported = new AtomicBoolean();
    private volatile ProcessorFailedException firstFailure;
    /** Guarded by this; {@link #start()} and {@link #stop} decide under the same lock. */
    private boolean started;
    /** Guarded by this; set by the first stop. */
    private CompletableFuture<Boolean> stopping;

    /** An app of the validated {@code builder}'s processors, not started. */
    ProcessingApp(ProcessingAppBuilder builder) {
        this.strategy = builder.strategy;
        this.processors = new ArrayList<>();
        for (ProcessingAppBuilder.Spec spec : builder.specs) {
            processors.add(new ProcessorRuntime(spec.id(), spec.source(), spec.concurrency(), spec.handler(),
                    builder.inboxSize, builder.retry, builder.listener, this::failed));
        }
    }

    /** A builder with every default; nothing is validated or touched until its {@code build()}. */
    public static ProcessingAppBuilder builder() {
        return new ProcessingAppBuilder();
    }

    /**
     * Starts every processor; returns this app. Idempotent and thread-safe: a second or concurrent
     * call starts nothing more and returns this app (a Kafka source likewise starts its consumer
     * once, on the first poll, and later polls go on with it).
     *
     * @throws IllegalStateException if the app was stopped ({@link #stop}, {@link #close()}), whether
     *     or not it had been started: a stopped app does not start again; build a new one
     */
    public ProcessingApp start() {
        synchronized (this) {
            if (stopping != null) {
                throw new IllegalStateException("processing app " + processorIds()
                        + " was stopped; a stopped app does not start again, build a new one");
            }
            if (!started) {
                started = true;
                processors.forEach(ProcessorRuntime::start);
            }
        }
        return this;
    }

    private void failed(ProcessorRuntime processor) {
        synchronized (this) {
            if (firstFailure == null) {
                firstFailure = processor.failure();
            }
        }
        if (strategy == FailureStrategy.STOP_ALL) {
            Thread.ofPlatform().name("waymark-stop-all").start(() -> {
                try {
                    stop();
                } catch (RuntimeException e) {
                    log.warn("stopping after a processor failure failed: {}", e.toString());
                }
            });
        }
    }

    /**
     * Waits until every processor has ended.
     *
     * @return whether they ended within the timeout
     * @throws ProcessorFailedException under {@link FailureStrategy#STOP_ALL}, once, for the first failure
     */
    public boolean awaitTermination(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        for (ProcessorRuntime p : processors) {
            if (!p.awaitDone(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())))) {
                return false;
            }
        }
        if (strategy == FailureStrategy.STOP_ALL && firstFailure != null
                && failureReported.compareAndSet(false, true)) {
            throw firstFailure;
        }
        return true;
    }

    /** {@link #stop(Duration, Duration)} with the default timeouts. */
    public boolean stop() {
        return stop(DEFAULT_DRAIN_TIMEOUT, DEFAULT_TOTAL_TIMEOUT);
    }

    /**
     * {@link #stop(Duration, Duration)} with {@code timeout} as the drain timeout and as the total:
     * processors get up to {@code timeout} to finalize what they took, then whatever still runs is
     * stopped by force.
     *
     * @return true when everything drained in time
     * @throws IllegalArgumentException if {@code timeout} is null or negative
     * @throws MessagingException with the first source-shutdown failure, after everything stopped
     */
    @Override
    public boolean stop(Duration timeout) {
        return stop(timeout, timeout);
    }

    /** {@link #stop()}: the default drain and total timeouts. */
    @Override
    public void close() {
        stop();
    }

    /**
     * Stops gracefully: every source's {@code shutdown()} is called exactly once (a failing one does
     * not skip the others; a failed processor's source had it called when the processor failed),
     * processors finalize what they already took, up to {@code drain}; then
     * whatever still runs is stopped by force, after which no finalizer runs. Concurrent and later
     * calls share the first call's result. An app never started stops at once (true): its sources
     * are shut down, no processor runs, and {@link #start()} is refused from then on.
     *
     * @return true when everything drained in time
     * @throws MessagingException with the first source-shutdown failure, after everything stopped
     */
    public boolean stop(Duration drain, Duration total) {
        if (drain == null || drain.isNegative() || total == null || total.isNegative()) {
            throw new IllegalArgumentException("stop timeouts must be >= 0, got drain=" + drain + ", total=" + total);
        }
        CompletableFuture<Boolean> result;
        boolean leader = false;
        boolean wasStarted;
        synchronized (this) {
            if (stopping == null) {
                stopping = new CompletableFuture<>();
                leader = true;
            }
            result = stopping;
            wasStarted = started;
        }
        if (leader) {
            try {
                result.complete(doStop(drain, total, wasStarted));
            } catch (RuntimeException e) {
                result.completeExceptionally(e);
            }
        }
        try {
            return result.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } catch (ExecutionException e) {
            throw (RuntimeException) e.getCause();
        }
    }

    private boolean doStop(Duration drain, Duration total, boolean wasStarted) {
        long deadline = System.nanoTime() + total.toNanos();
        RuntimeException shutdownFailure = null;
        for (ProcessorRuntime p : processors) {
            p.draining();
            Exception e = p.shutdownSource(); // a failed processor's source was shut down when it failed
            if (e != null && shutdownFailure == null) {
                shutdownFailure = new MessagingException("shutting down source '" + p.source().name()
                        + "' of processor '" + p.id() + "' failed", e);
            }
            if (!wasStarted) {
                p.endUnstarted(); // nothing runs that could end it: it would hold the stop for the whole drain
            }
        }
        boolean drained = true;
        long drainDeadline = Math.min(deadline, System.nanoTime() + drain.toNanos());
        try {
            for (ProcessorRuntime p : processors) {
                long left = drainDeadline - System.nanoTime();
                if (!p.awaitDone(Duration.ofNanos(Math.max(0, left)))) {
                    drained = false;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            drained = false;
        }
        if (!drained) {
            processors.forEach(ProcessorRuntime::forceStop);
        }
        if (shutdownFailure != null) {
            throw shutdownFailure;
        }
        return drained;
    }

    /** Every processor's state, by id, in registration order. */
    public Map<String, ProcessorState> snapshot() {
        Map<String, ProcessorState> out = new LinkedHashMap<>();
        processors.forEach(p -> out.put(p.id(), p.snapshot()));
        return out;
    }

    /**
     * The state of one processor: what {@link #snapshot()} holds for {@code processorId}, without
     * taking the others' snapshots.
     *
     * @throws WaymarkInputException when no processor of this app has that id
     */
    public ProcessorState snapshot(String processorId) {
        for (ProcessorRuntime p : processors) {
            if (p.id().equals(processorId)) {
                return p.snapshot();
            }
        }
        throw new WaymarkInputException("no processor with id " + processorId + " in this app; its processors are "
                + processorIds());
    }

    /**
     * Why processor {@code processorId} failed, typed, whatever the {@link FailureStrategy}: empty
     * while it has not failed (running, halted or stopped). Its {@link ProcessorFailedException#getCause()
     * cause} is what failed, as it was thrown: the source's own exception when the source failed or
     * refused an acknowledgement (for a Kafka source a {@code KafkaSourceException}, with topic,
     * partition and offset, such as a dead-letter topic that is missing or refused the dead letter),
     * else the handler's or the runtime's. {@link #snapshot(String)} carries the same failure as text.
     *
     * @throws WaymarkInputException when no processor of this app has that id
     */
    public Optional<ProcessorFailedException> failure(String processorId) {
        for (ProcessorRuntime p : processors) {
            if (p.id().equals(processorId)) {
                return Optional.ofNullable(p.failure());
            }
        }
        throw new WaymarkInputException("no processor with id " + processorId + " in this app; its processors are "
                + processorIds());
    }

    /** The processor ids, in registration order. */
    public List<String> processorIds() {
        return processors.stream().map(ProcessorRuntime::id).toList();
    }

    /** {@link #isHealthy(Duration)} with {@link #DEFAULT_STUCK_AFTER}. */
    public boolean isHealthy() {
        return isHealthy(DEFAULT_STUCK_AFTER);
    }

    /**
     * Healthy while no processor has failed and none is stuck: having work pending but finalizing
     * no message for good (ok or dead letter) for {@code stuckAfter}. Work pending is messages in
     * flight or in the inbox, or a retry since the last message finalized for good: retries are not
     * progress, so a message whose handler always throws makes its processor stuck (a retry stops
     * counting as pending {@code stuckAfter} after the last call that saw a new one, so a retried
     * message that never comes back does not keep an idle processor stuck). Progress is sampled by
     * these calls rather than stamped per message (a clock read per message would cost more than a
     * fast handler), so the time without progress counts from the first call that saw work pending
     * at the current progress: call this from a periodic probe, more often than {@code stuckAfter}
     * and than the retry delay. Progress is counted per processor: a message retried on one Kafka
     * partition while others advance does not make it stuck (watch the source's lag for that).
     */
    public boolean isHealthy(Duration stuckAfter) {
        return processors.stream().noneMatch(p -> p.snapshot().lifecycle() == ProcessorState.Lifecycle.FAILED
                || p.isStuck(stuckAfter));
    }
}
