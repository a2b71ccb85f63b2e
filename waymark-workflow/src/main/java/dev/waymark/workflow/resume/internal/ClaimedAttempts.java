package dev.waymark.workflow.resume.internal;

import dev.waymark.workflow.internal.Advancer;
import dev.waymark.workflow.internal.EngineRuntime;
import dev.waymark.workflow.internal.Instances;
import dev.waymark.workflow.internal.LeaseKeeper;
import dev.waymark.workflow.internal.Leases;
import dev.waymark.workflow.resume.ResumeEvent;
import dev.waymark.workflow.resume.ResumeOptions;
import dev.waymark.workflow.resume.ResumeSummary;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One claimed instance's attempt, as a resume worker runs it: the attempt itself, the release of a
 * claim that will not run, and what the attempt adds to the pass summary and tells the listener; and
 * a batch of them fanned out at most the concurrency at once ({@link #advanceAll}).
 */
final class ClaimedAttempts {

    private static final Logger log = LoggerFactory.getLogger(ResumeLoop.class);

    private final EngineRuntime runtime;
    private final Instances instances;
    private final LeaseKeeper keeper;
    private final Advancer advancer;
    private final Advancer.Policy policy;
    private final ResumeOptions options;
    /** Attempts running in the process (the engine's runs and its workers' attempts), for the backlog. */
    private final AtomicLong engineInFlight;
    private final BiConsumer<Instances.Key, Advancer.Advance> advanced;

    ClaimedAttempts(EngineRuntime runtime, LeaseKeeper keeper, Advancer advancer, Advancer.Policy policy,
            ResumeOptions options, AtomicLong engineInFlight, BiConsumer<Instances.Key, Advancer.Advance> advanced) {
        this.runtime = runtime;
        this.instances = runtime.instances();
        this.keeper = keeper;
        this.advancer = advancer;
        this.policy = policy;
        this.options = options;
        this.engineInFlight = engineInFlight;
        this.advanced = advanced;
    }

    /** Releases {@code c} without running it. */
    ResumeSummary releaseEmpty(Leases.Claimed c) {
        release(c);
        return ResumeSummary.EMPTY;
    }

    /** Gives back a claimed lease that will not be run (closing), so another worker takes it at once. */
    void release(Leases.Claimed c) {
        try {
            instances.leases().release(c.key().name(), c.key().id(), keeper.owner(), c.claim().epoch(), false);
        } catch (RuntimeException e) {
            log.debug("waymark resume: releasing {} failed; the lease expires by itself", c.key(), e);
        } finally {
            keeper.drop(c.key());
        }
    }

    /** Runs one claimed instance and reports how it ended; the claim's hold on the lease ends with it. */
    ResumeSummary advanceClaimed(Leases.Claimed claimed) {
        Instances.Key key = claimed.key();
        Leases.Claim c = claimed.claim();
        Advancer.Advance a;
        engineInFlight.incrementAndGet();
        try {
            if (c.previousExpiry() != null) {
                Duration since = Duration.between(c.previousExpiry(), c.claimedAt());
                safely(() -> options.listener().onRecovered(key.name(), key.id(), since));
            }
            a = advancer.advance(key, c.epoch(), keeper, policy, null);
        } finally {
            keeper.drop(key);
            engineInFlight.decrementAndGet();
        }
        try {
            advanced.accept(key, a);
        } catch (RuntimeException e) {
            log.warn("waymark resume: advance hook failed", e);
        }
        return summaryOf(key, a);
    }

    /**
     * Advances every claim of {@code claimed} on {@code advances}, at most the concurrency at once, and
     * waits for all; a claim taken after {@code closing} turned true (or refused by the executor,
     * shut down meanwhile) is released without running.
     */
    ResumeSummary advanceAll(List<Leases.Claimed> claimed, ExecutorService advances, BooleanSupplier closing) {
        Semaphore permits = new Semaphore(options.concurrency());
        List<Future<ResumeSummary>> futures = new ArrayList<>();
        for (Leases.Claimed c : claimed) {
            try {
                futures.add(advances.submit(() -> {
                    permits.acquire();
                    try {
                        return closing.getAsBoolean() ? releaseEmpty(c) : advanceClaimed(c);
                    } finally {
                        permits.release();
                    }
                }));
            } catch (RejectedExecutionException e) {
                release(c); // closed meanwhile
            }
        }
        ResumeSummary sum = ResumeSummary.EMPTY;
        for (Future<ResumeSummary> f : futures) {
            try {
                sum = sum.plus(f.get());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                futures.forEach(x -> x.cancel(true));
                return sum;
            } catch (CancellationException e) {
                // cancelled by close; its lease expires or was released
            } catch (ExecutionException e) {
                sum = sum.plus(new ResumeSummary(0, 0, 0, 0, 0, 0, 0, 0, 1, 0));
                safely(() -> options.listener().onEvent(new ResumeEvent.PassFailed(e.getCause())));
            }
        }
        return sum;
    }

    private ResumeSummary summaryOf(Instances.Key key, Advancer.Advance a) {
        return switch (a.result()) {
            case COMPLETED -> new ResumeSummary(0, 1, 1, 0, 0, 0, 0, 0, 0, 0);
            case SUSPENDED -> new ResumeSummary(0, 1, 0, 1, 0, 0, 0, 0, 0, 0);
            case CANCELLED -> new ResumeSummary(0, 1, 0, 0, 0, 0, 1, 0, 0, 0);
            case FAILED -> {
                if (a.error() != null) { // the last crash: reported as a crash, then as the failure it caused
                    safely(() -> options.listener().onEvent(new ResumeEvent.Crashed(key.name(), key.id(), a.attempts(),
                            options.retry().maxAttempts(), a.error())));
                    safely(() -> options.listener().onEvent(
                            new ResumeEvent.MarkedFailed(key.name(), key.id(), a.attempts(), a.error())));
                }
                // failed counts what this pass marked failed (its last crash), as the seed does; a run that
                // found the instance already failed (another worker marked it) was only resumed, or
                // every worker that ran into it would count the one failure again
                int marked = a.error() != null ? 1 : 0;
                yield new ResumeSummary(0, 1, 0, 0, 0, marked, 0, marked, 0, 0);
            }
            case CRASHED -> {
                safely(() -> options.listener().onEvent(new ResumeEvent.Crashed(key.name(), key.id(), a.attempts(),
                        options.retry().maxAttempts(), a.error())));
                yield new ResumeSummary(0, 1, 0, 0, 0, 0, 0, 1, 0, 0);
            }
            case TRANSIENT -> {
                safely(() -> options.listener()
                        .onEvent(new ResumeEvent.TransientError(key.name(), key.id(), a.error())));
                yield new ResumeSummary(0, 1, 0, 0, 0, 0, 0, 0, 1, 0);
            }
            case LEASE_LOST -> new ResumeSummary(0, 0, 0, 0, 0, 0, 0, 0, 0, 1);
            case INTERRUPTED -> ResumeSummary.EMPTY;
        };
    }

    private void safely(Runnable r) {
        runtime.safely(r); // the engine's one guard around listener calls
    }
}
