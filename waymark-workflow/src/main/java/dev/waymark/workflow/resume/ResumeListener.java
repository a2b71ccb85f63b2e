package dev.waymark.workflow.resume;

import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hooks of a resume worker: log events and per-pass summaries. Called from worker threads
 * (concurrently when concurrency is above 1); must be thread-safe and must not throw.
 */
public interface ResumeListener {

    /** The default: events rendered to SLF4J (logger {@code dev.waymark.workflow.resume}), warnings for crashes and failures. */
    ResumeListener LOGGING = new ResumeListener() {
        private final Logger log = LoggerFactory.getLogger("dev.waymark.workflow.resume");

        @Override
        public void onEvent(ResumeEvent event) {
            switch (event) {
                case ResumeEvent.UnknownName u -> log.warn("waymark resume: {}", u.render());
                case ResumeEvent.TransientError t -> log.warn("waymark resume: {}", t.render());
                case ResumeEvent.Crashed c -> log.warn("waymark resume: {}", c.render());
                case ResumeEvent.MarkedFailed m -> log.error("waymark resume: {}", m.render());
                case ResumeEvent.CascadeRepaired r -> log.info("waymark resume: {}", r.render());
                case ResumeEvent.PassFailed p -> log.warn("waymark resume: {}", p.render(), p.error());
            }
        }

        @Override
        public boolean logsEvents() {
            return true;
        }
    };

    /**
     * Whether this listener logs the crash, failure and transient-error events it hears: then the
     * engine does not log them a second time (it logs them at WARN for any other listener). True for
     * {@link #LOGGING}; a listener that forwards events to it should say so too.
     */
    default boolean logsEvents() {
        return false;
    }

    /** Something happened worth logging. */
    default void onEvent(ResumeEvent event) {}

    /**
     * A pass ended. For {@link ResumeWorker#resumeOnce()} the summary is what the pass did; for the
     * started loop, which does not wait for the attempts it starts, it is what the pass claimed plus
     * the attempts that ended since the previous report.
     *
     * @param pendingAwakeables awakeables still waiting, as of the last backlog sample (see
     *     {@link dev.waymark.workflow.backpressure.WorkflowBacklog})
     * @param runnableBacklog runnable instances waiting for a worker, as of the last backlog sample
     *     ({@link dev.waymark.workflow.backpressure.WorkflowBacklog#waiting()}; before any sample, what the pass claimed)
     */
    default void onPass(ResumeSummary summary, Duration elapsed, long pendingAwakeables, long runnableBacklog) {}

    /** An instance whose previous owner's lease had expired was taken over {@code sinceExpiry} after the expiry. */
    default void onRecovered(String name, String id, Duration sinceExpiry) {}
}
