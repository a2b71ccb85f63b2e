package dev.waymark.workflow.micrometer;

import dev.waymark.workflow.listener.WorkflowListener;
import dev.waymark.workflow.status.WorkflowOutcome;
import dev.waymark.workflow.resume.ResumeEvent;
import dev.waymark.workflow.resume.ResumeListener;
import dev.waymark.workflow.resume.ResumeSummary;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Micrometer meters of workflow runs (as a {@link WorkflowListener} of the engine) and of resume
 * passes (as a {@link ResumeListener} of a resume worker, which also forwards events to the logging
 * listener). Names and tags are listed in docs/METRICS.md.
 *
 * <pre>{@code
 * WorkflowMetrics metrics = new WorkflowMetrics(registry);
 * WorkflowEngine engine = WorkflowEngine.builder(store, workflows).listener(metrics).build();
 * engine.resumeWorker(ResumeOptions.builder().listener(metrics).build()).start();
 * }</pre>
 */
public final class WorkflowMetrics implements WorkflowListener, ResumeListener {

    private final MeterRegistry registry;
    private final ResumeListener delegate;
    private final AtomicLong active = new AtomicLong();
    private final AtomicLong pendingAwakeables = new AtomicLong();
    private final AtomicLong runnableBacklog = new AtomicLong();
    private final Map<String, Counter> runs = new ConcurrentHashMap<>();
    private final Counter stepsExecuted;
    private final Counter stepsReplayed;
    private final Timer stepDuration;
    private final Timer runDuration;
    private final Counter resumed;
    private final Counter completed;
    private final Counter failed;
    private final Counter crashed;
    private final Counter leaseSkipped;
    private final Counter resumeErrors;
    private final Counter unknownName;
    private final Counter passFailures;
    private final Counter cascadesRepaired;
    private final Timer pass;
    private final Timer recovery;

    /** Meters on {@code registry}; resume events are also logged through {@link ResumeListener#LOGGING}. */
    public WorkflowMetrics(MeterRegistry registry) {
        this(registry, ResumeListener.LOGGING);
    }

    /** Meters on {@code registry}; resume events are forwarded to {@code delegate}. */
    public WorkflowMetrics(MeterRegistry registry, ResumeListener delegate) {
        this.registry = registry;
        this.delegate = delegate;
        Gauge.builder("waymark.workflow.active", active, AtomicLong::get)
                .description("workflow runs executing in this process").register(registry);
        Gauge.builder("waymark.workflow.awakeables.pending", pendingAwakeables, AtomicLong::get)
                .description("awakeables waiting for completion, sampled each resume pass").register(registry);
        Gauge.builder("waymark.workflow.runnable.backlog", runnableBacklog, AtomicLong::get)
                .description("runnable instances found by the last resume pass").register(registry);
        stepsExecuted = Counter.builder("waymark.workflow.steps.executed").register(registry);
        stepsReplayed = Counter.builder("waymark.workflow.steps.replayed").register(registry);
        stepDuration = Timer.builder("waymark.workflow.step.duration").publishPercentileHistogram().register(registry);
        runDuration = Timer.builder("waymark.workflow.run.duration").publishPercentileHistogram().register(registry);
        resumed = Counter.builder("waymark.workflow.resume.resumed").register(registry);
        completed = Counter.builder("waymark.workflow.resume.completed").register(registry);
        failed = Counter.builder("waymark.workflow.resume.failed").register(registry);
        crashed = Counter.builder("waymark.workflow.resume.crashed").register(registry);
        leaseSkipped = Counter.builder("waymark.workflow.resume.lease_skipped").register(registry);
        resumeErrors = Counter.builder("waymark.workflow.resume.errors").register(registry);
        unknownName = Counter.builder("waymark.workflow.resume.unknown_name").register(registry);
        passFailures = Counter.builder("waymark.workflow.resume.pass_failures").register(registry);
        cascadesRepaired = Counter.builder("waymark.workflow.resume.cascades_repaired")
                .description("live children of cancelled workflows cancelled by a resume worker").register(registry);
        pass = Timer.builder("waymark.workflow.resume.pass").register(registry);
        recovery = Timer.builder("waymark.workflow.resume.recovery")
                .description("from a dead owner's lease expiry to the takeover").register(registry);
    }

    @Override
    public void runStarted(String name, String id) {
        active.incrementAndGet();
    }

    @Override
    public void runFinished(String name, String id, WorkflowOutcome<?> outcome, Throwable error, Duration elapsed) {
        active.decrementAndGet();
        String kind = WorkflowListener.outcomeLabel(outcome);
        runs.computeIfAbsent(name + "\u0000" + kind, k -> Counter.builder("waymark.workflow.runs")
                .tag("workflow", name).tag("outcome", kind).register(registry)).increment();
        runDuration.record(elapsed);
    }

    @Override
    public void stepExecuted(String name, String step, Duration elapsed) {
        stepsExecuted.increment();
        stepDuration.record(elapsed);
    }

    @Override
    public void stepReplayed(String name, String step) {
        stepsReplayed.increment();
    }

    @Override
    public void onEvent(ResumeEvent event) {
        if (event instanceof ResumeEvent.PassFailed) {
            passFailures.increment();
        } else if (event instanceof ResumeEvent.CascadeRepaired) {
            cascadesRepaired.increment();
        }
        delegate.onEvent(event);
    }

    @Override
    public boolean logsEvents() {
        return delegate.logsEvents();
    }

    @Override
    public void onPass(ResumeSummary s, Duration elapsed, long pending, long backlog) {
        resumed.increment(s.resumed());
        completed.increment(s.completed());
        failed.increment(s.failed());
        crashed.increment(s.crashed());
        leaseSkipped.increment(s.leaseSkipped());
        resumeErrors.increment(s.transientErrors());
        unknownName.increment(s.unknownName());
        pass.record(elapsed);
        pendingAwakeables.set(pending);
        runnableBacklog.set(backlog);
        delegate.onPass(s, elapsed, pending, backlog);
    }

    @Override
    public void onRecovered(String name, String id, Duration sinceExpiry) {
        recovery.record(sinceExpiry.isNegative() ? Duration.ZERO : sinceExpiry);
        delegate.onRecovered(name, id, sinceExpiry);
    }
}
