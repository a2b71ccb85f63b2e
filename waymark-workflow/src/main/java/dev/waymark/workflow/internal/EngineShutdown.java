package dev.waymark.workflow.internal;

import dev.waymark.workflow.resume.ResumeWorker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The stop of a workflow engine ({@code WorkflowEngine.stop}): its own runs and its resume workers'
 * attempts drain side by side under one deadline, then what still runs is interrupted; then what
 * served them (the cancellation listener, group commit, lease renewal) is released. Once, whoever
 * calls (see {@link StopOnce}).
 */
public final class EngineShutdown {

    private static final Logger log = LoggerFactory.getLogger(EngineShutdown.class);

    private final InProcessRuns local;
    private final List<ResumeWorker> workers;
    private final Runnable release;
    private final StopOnce once = new StopOnce("workflow engine", this::stopAll, this::awaitStopped);

    /**
     * The stop of the runs in {@code local} and of {@code workers} (read when the stop begins), after
     * which {@code release} runs.
     */
    public EngineShutdown(InProcessRuns local, List<ResumeWorker> workers, Runnable release) {
        this.local = local;
        this.workers = workers;
        this.release = release;
    }

    /**
     * Stops (the first call) or answers for the stop under way (later calls), as {@link StopOnce#stop}.
     *
     * @throws IllegalArgumentException if {@code timeout} is null or negative
     */
    public boolean stop(Duration timeout) {
        return once.stop(timeout);
    }

    private boolean stopAll(Duration timeout) {
        Deadline deadline = Deadline.after(timeout);
        // a worker answers within its grace and its own forced wait, which run beside the engine's
        Deadline workersAnswer = Deadline.after(timeout, StopOnce.FORCED_STOP_WAIT.plusSeconds(1));
        local.stopTaking(); // the engine's own runs and the workers' attempts drain side by side
        List<Thread> stoppers = new ArrayList<>();
        List<CompletableFuture<Boolean>> stopped = new ArrayList<>();
        for (ResumeWorker worker : workers) {
            Duration grace = deadline.remaining();
            CompletableFuture<Boolean> answer = new CompletableFuture<>();
            stoppers.add(Thread.ofPlatform().daemon().name("waymark-resume-stop").start(() -> {
                try {
                    answer.complete(worker.stop(grace));
                } catch (RuntimeException | Error e) {
                    answer.completeExceptionally(e);
                }
            }));
            stopped.add(answer);
        }
        boolean done;
        boolean interrupted = false;
        try {
            done = local.awaitRuns(deadline);
            for (CompletableFuture<Boolean> answer : stopped) {
                done &= answered(answer, workersAnswer);
            }
        } catch (InterruptedException e) {
            interrupted = true;
            stoppers.forEach(Thread::interrupt); // the workers interrupt their attempts at once and answer
            done = ended(stopped);
        }
        release.run();
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return done;
    }

    /** Whether every run and every worker has stopped, waiting up to {@code nanos}. */
    private boolean awaitStopped(long nanos) throws InterruptedException {
        Deadline deadline = Deadline.after(Duration.ofNanos(nanos));
        if (!local.awaitEnded(nanos)) {
            return false;
        }
        for (ResumeWorker worker : workers) {
            if (!worker.stop(deadline.remaining())) { // answers for the stop the engine's began
                return false;
            }
        }
        return true;
    }

    /** What a worker's stop answered by {@code deadline}; false if it has not answered by then. */
    private static boolean answered(CompletableFuture<Boolean> answer, Deadline deadline)
            throws InterruptedException {
        try {
            return answer.get(deadline.remainingNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            return false;
        } catch (ExecutionException e) {
            log.warn("waymark workflow: stopping a resume worker failed", e.getCause());
            return false;
        }
    }

    /** Whether the runs have ended and every worker answered that it stopped, without waiting. */
    private boolean ended(List<CompletableFuture<Boolean>> workerStops) {
        boolean done;
        try {
            done = local.awaitEnded(0);
        } catch (InterruptedException e) {
            done = false; // not waiting: only a second interrupt gets here
        }
        for (CompletableFuture<Boolean> answer : workerStops) {
            done &= answer.isDone() && !answer.isCompletedExceptionally() && answer.join();
        }
        return done;
    }
}
