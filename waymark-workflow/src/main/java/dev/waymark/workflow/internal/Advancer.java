package dev.waymark.workflow.internal;

import dev.waymark.core.RetryPolicy;
import dev.waymark.store.StoreException;
import dev.waymark.store.StoreUnavailableException;
import dev.waymark.store.TransientStoreException;
import dev.waymark.workflow.exception.WorkflowConfigException;
import dev.waymark.workflow.exception.WorkflowLeaseLostException;
import dev.waymark.workflow.status.WorkflowOutcome;
import dev.waymark.workflow.status.WorkflowStatus;
import java.time.Duration;
import java.util.OptionalInt;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One attempt at a leased instance, and what follows from how it ended: a crash costs an attempt
 * with backoff, the last attempt marks the workflow failed (waking a parent), a store error or a
 * lost lease costs nothing, and an interruption (shutdown) records nothing. The lease is released
 * at the end in every case.
 */
public final class Advancer {

    private static final Logger log = LoggerFactory.getLogger(Advancer.class);

    /** How an attempt ended. */
    public enum Result {
        /** The workflow completed. */
        COMPLETED,
        /** It parked on a wake source. */
        SUSPENDED,
        /** It is terminally failed (this attempt used the last of its budget, or it was failed elsewhere). */
        FAILED,
        /** It is cancelled. */
        CANCELLED,
        /** The body threw; an attempt was recorded and it will be retried after backoff. */
        CRASHED,
        /** A store error; no attempt consumed. */
        TRANSIENT,
        /** Another worker took the lease over. */
        LEASE_LOST,
        /** The thread was interrupted (shutdown); nothing recorded. */
        INTERRUPTED
    }

    /** The attempt's result, its outcome if the body ended normally, and the error if it did not. */
    public record Advance(Result result, WorkflowOutcome<?> outcome, Throwable error, int attempts, boolean progressed,
            boolean wokenMeanwhile, boolean released) {
        Advance(Result result, WorkflowOutcome<?> outcome, Throwable error, int attempts, boolean progressed) {
            this(result, outcome, error, attempts, progressed, false, false);
        }

        Advance woken() {
            return new Advance(result, outcome, error, attempts, progressed, true, released);
        }
    }

    /** Crash budget and backoff. */
    public record Policy(int maxAttempts, Duration backoffBase, Duration backoffCap) {

        /**
         * The crash budget and backoff of {@code retry}, set as option {@code option}. The database
         * computes each crash's backoff as it records the crash ({@code base * 2^(n-1)}, at most
         * {@code cap}), so a policy for crashes doubles and has no jitter.
         *
         * @throws WorkflowConfigException if {@code retry} is null, does not double or has jitter
         */
        public static Policy of(RetryPolicy retry, String option) {
            Args.option(retry, option);
            if (retry.multiplier() != 2.0 || retry.jitter() != 0.0) {
                throw new WorkflowConfigException(option + " must double without jitter (the crash backoff"
                        + " is computed by the database as it records the crash: RetryPolicy.exponential(...)), got "
                        + retry);
            }
            return new Policy(retry.maxAttempts(), retry.initialDelay(), retry.maxDelay());
        }
    }

    private final EngineRuntime rt;
    private final Runner runner;
    /**
     * Whether the caller reports transient errors, crashes and failures through a listener that logs
     * them (a resume worker whose listener is {@code ResumeListener.LOGGING} or forwards to it): this
     * class then logs them at DEBUG only, so that each is logged once.
     */
    private final boolean callerReports;

    /** An advancer over the shared runtime that logs every crash, failure and transient error. */
    public Advancer(EngineRuntime rt) {
        this(rt, false);
    }

    /** An advancer over the shared runtime; see {@link #callerReports}. */
    public Advancer(EngineRuntime rt, boolean callerReports) {
        this(rt, callerReports, null);
    }

    /**
     * An advancer over the shared runtime whose runs may wait in memory in {@code holds} (null: they
     * suspend at once); see {@link #callerReports}.
     */
    public Advancer(EngineRuntime rt, boolean callerReports, HeldWaits holds) {
        this.rt = rt;
        this.runner = new Runner(rt, holds);
        this.callerReports = callerReports;
    }

    /** Runs the instance leased by {@code keeper} at {@code epoch}; never throws. */
    public Advance advance(Instances.Key key, long epoch, LeaseKeeper keeper, Policy policy, String freshInput) {
        keeper.hold(key);
        rt.cancels.runStarted(key);
        long started = System.nanoTime();
        rt.safely(() -> rt.listener.runStarted(key.name(), key.id()));
        Advance advance = null;
        Throwable escaped = null;
        try {
            advance = attempt(key, keeper.owner(), epoch, policy, freshInput);
        } catch (RuntimeException | Error e) {
            // a bug or a fatal error: the listener still hears of the run's end below (a tracing span
            // would otherwise stay open, and current on this thread for every later run)
            escaped = e;
            throw e;
        } finally {
            rt.cancels.runEnded(key);
            keeper.drop(key);
            if (advance == null) {
                Throwable error = escaped;
                rt.safely(() -> rt.listener.runFinished(key.name(), key.id(), null, error,
                        Duration.ofNanos(System.nanoTime() - started)));
            }
        }
        Advance done = advance;
        rt.safely(() -> rt.listener.runFinished(key.name(), key.id(), done.outcome(), done.error(),
                Duration.ofNanos(System.nanoTime() - started)));
        if (done.released()) {
            return done; // the completion marker cleared the lease in its own transaction
        }
        boolean interrupted = Thread.interrupted(); // release even when shutting down
        try {
            WorkflowStatus status = rt.instances.leases().release(key.name(), key.id(), keeper.owner(), epoch,
                    done.outcome() != null);
            if (done.result() == Result.SUSPENDED && status == WorkflowStatus.RUNNING) {
                return done.woken(); // a wake landed after the suspend write, before the release
            }
        } catch (StoreException e) {
            log.warn("waymark workflow: releasing {}/{} failed; the lease expires by itself", key.name(), key.id(), e);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        return done;
    }

    private Advance attempt(Instances.Key key, String owner, long epoch, Policy policy, String freshInput) {
        try {
            Runner.Attempt a = runner.run(key.name(), key.id(), epoch, freshInput);
            return new Advance(resultOf(a.outcome()), a.outcome(), null, 0, a.progressed(), false, a.released());
        } catch (WorkflowLeaseLostException e) {
            return leaseLost(key, owner, epoch, e);
        } catch (Unwind.Fail f) {
            return crashed(key, owner, epoch, policy, f.error, true);
        } catch (StoreUnavailableException | TransientStoreException e) {
            if (interrupted(e)) {
                return new Advance(Result.INTERRUPTED, null, e, 0, false);
            }
            report("waymark workflow: store error while advancing {}/{}; retried on a later pass", key.name(),
                    key.id(), e);
            return new Advance(Result.TRANSIENT, null, e, 0, false);
        } catch (Unwind u) {
            throw new IllegalStateException("unwind escaped the runner", u);
        } catch (Throwable e) {
            // Anything else the body or a step threw, a store error that retrying cannot cure (a
            // conflict, a refused input) included, and errors: a crash, counted against maxAttempts.
            if (interrupted(e)) {
                return new Advance(Result.INTERRUPTED, null, e, 0, false);
            }
            return crashed(key, owner, epoch, policy, e, false);
        }
    }

    /**
     * A lease lost to another worker is expected (this process paused, or a step outlived the TTL
     * without renewals): one WARN line with the state, no stack trace; the new owner goes on.
     */
    private Advance leaseLost(Instances.Key key, String owner, long epoch, Throwable error) {
        String holder;
        try {
            holder = rt.instances.find(key.name(), key.id()).map(r -> r.info().leaseOwner() == null
                    ? "nobody holds it now (epoch " + r.info().leaseEpoch() + ")"
                    : r.info().leaseOwner() + " holds it at epoch " + r.info().leaseEpoch())
                    .orElse("the instance no longer exists");
        } catch (RuntimeException e) {
            holder = "its holder could not be read: " + e.getMessage();
        }
        log.warn("waymark workflow: {}/{} lost its lease: this run (owner {} at epoch {}) stopped without"
                + " journaling further; {}", key.name(), Text.escape(key.id()), owner, epoch, holder);
        return new Advance(Result.LEASE_LOST, null, error, 0, false);
    }

    /**
     * Records a crash under the lease and fails the workflow when its budget is spent, or at once when
     * the crash is {@code permanent} (no attempt could end otherwise).
     */
    private Advance crashed(Instances.Key key, String owner, long epoch, Policy policy, Throwable error,
            boolean permanent) {
        String rendered = render(error);
        OptionalInt attempts;
        try {
            attempts = rt.instances.leases().recordCrash(key.name(), key.id(), rendered, policy.backoffBase(),
                    policy.backoffCap(),
                    epoch);
        } catch (StoreException e) {
            log.warn("waymark workflow: recording the crash of {}/{} failed", key.name(), key.id(), e);
            return new Advance(Result.TRANSIENT, null, error, 0, false);
        }
        if (attempts.isEmpty()) { // terminal meanwhile, or the lease was lost
            if (lostTheLease(key, epoch)) {
                return leaseLost(key, owner, epoch, error);
            }
            return new Advance(Result.TRANSIENT, null, error, 0, false);
        }
        int n = attempts.getAsInt();
        report("waymark workflow: {}/{} crashed on attempt {}/{}: {}", key.name(), key.id(), n, policy.maxAttempts(),
                rendered);
        if (n < policy.maxAttempts() && !permanent) {
            return new Advance(Result.CRASHED, null, error, n, false);
        }
        String reason = permanent
                ? "failed on attempt " + n + " without retries (no attempt could end otherwise): "
                        + rendered
                : "crashed " + n + " times; last error: " + rendered;
        try {
            if (!markFailed(key, epoch, reason)) { // lease lost, or terminal meanwhile
                return lostTheLease(key, epoch)
                        ? leaseLost(key, owner, epoch, error)
                        : new Advance(Result.TRANSIENT, null, error, n, false);
            }
        } catch (RuntimeException e) {
            log.warn("waymark workflow: marking {}/{} failed after {} crashes failed; retried on a later pass",
                    key.name(), key.id(), n, e);
            return new Advance(Result.TRANSIENT, null, error, n, false);
        }
        return new Advance(Result.FAILED, null, error, n, false);
    }

    /** Whether the instance is live and leased under another epoch than {@code epoch}. */
    private boolean lostTheLease(Instances.Key key, long epoch) {
        try {
            return rt.instances.find(key.name(), key.id())
                    .filter(r -> !r.info().status().isTerminal() && r.info().leaseEpoch() != epoch).isPresent();
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** Journals WorkflowFailed (waking a parent in the same transaction) unless the instance is already terminal. */
    public boolean markFailed(Instances.Key key, Long epoch, String reason) {
        Instances.Appended a = rt.instances.appendTerminal(key.name(), key.id(), "WorkflowFailed",
                WorkflowJson.withText("reason", reason), epoch, WorkflowStatus.FAILED, reason);
        if (a.kind() != SqlOutcomes.Append.APPENDED) {
            return false;
        }
        rt.signal();
        report("waymark workflow: marked {}/{} failed: {}", key.name(), key.id(), reason);
        return true;
    }

    /** Logs what the caller may report itself: at WARN, or at DEBUG when it does (see {@link #callerReports}). */
    private void report(String format, Object... args) {
        if (callerReports) {
            log.debug(format, args);
        } else {
            log.warn(format, args);
        }
    }

    private static Result resultOf(WorkflowOutcome<?> outcome) {
        return switch (outcome) {
            case WorkflowOutcome.Completed<?> c -> Result.COMPLETED;
            case WorkflowOutcome.Suspended<?> s -> Result.SUSPENDED;
            case WorkflowOutcome.Failed<?> f -> Result.FAILED;
            case WorkflowOutcome.Cancelled<?> c -> Result.CANCELLED;
            case WorkflowOutcome.ContinuedAsNew<?> c -> Result.SUSPENDED;
        };
    }

    private static boolean interrupted(Throwable e) {
        if (Thread.currentThread().isInterrupted()) {
            return true;
        }
        // Not InterruptedIOException in general: a step's socket or HTTP timeout is one, and it is a crash.
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof InterruptedException || t instanceof java.nio.channels.ClosedByInterruptException) {
                return true;
            }
        }
        return false;
    }

    /**
     * The error as stored (at most 2,000 characters): a NUL or a lone UTF-16 surrogate, which a text
     * column cannot hold, becomes U+FFFD, and the cut never splits a surrogate pair. Otherwise a crash
     * whose message held a NUL could never be recorded, and its attempts would never be counted.
     */
    static String render(Throwable e) {
        String message = e.getClass().getName() + (e.getMessage() == null ? "" : ": " + e.getMessage());
        StringBuilder out = new StringBuilder(Math.min(message.length(), 2000));
        for (int i = 0; i < message.length() && out.length() < 2000; i++) {
            char c = message.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < message.length()
                    && Character.isLowSurrogate(message.charAt(i + 1))) {
                if (out.length() + 2 > 2000) {
                    break;
                }
                out.append(c).append(message.charAt(++i));
            } else {
                out.append(c == 0 || Character.isSurrogate(c) ? '\uFFFD' : c);
            }
        }
        return out.toString();
    }

}
