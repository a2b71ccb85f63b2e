package dev.waymark.workflow;

import static org.assertj.core.api.Assertions.assertThat;

import dev.waymark.store.EventStore;
import dev.waymark.testkit.PostgresExtension;
import dev.waymark.workflow.resume.ResumeListener;
import dev.waymark.workflow.resume.ResumeSummary;
import dev.waymark.workflow.resume.ResumeWorker;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A listener that throws, even a {@code NoClassDefFoundError} (a telemetry listener whose optional
 * library is missing), is logged and ignored: runs and resume passes go on.
 */
class ListenerFailureTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = new PostgresExtension();

    private static final Duration WAIT = Duration.ofSeconds(20);

    private static EventStore store;
    private static WorkflowRegistry registry;

    @BeforeAll
    static void setUp() {
        store = WorkflowTesting.migratedStore(POSTGRES);
        registry = new WorkflowRegistry().register("plain", String.class, String.class,
                (ctx, in) -> ctx.step("only", String.class, () -> "done " + in));
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    private static NoClassDefFoundError missingLibrary() {
        return new NoClassDefFoundError("io/opentelemetry/api/trace/Tracer");
    }

    @Test
    void a_run_survives_a_listener_that_throws_an_error() throws Exception {
        WorkflowListener broken = new WorkflowListener() {
            @Override
            public void runStarted(String name, String id) {
                throw missingLibrary();
            }

            @Override
            public void runFinished(String name, String id, WorkflowOutcome<?> outcome, Throwable error,
                    Duration elapsed) {
                throw missingLibrary();
            }
        };
        try (WorkflowEngine engine = WorkflowTesting.fastEngine(store, registry).listener(broken).build()) {
            WorkflowHandle<String> h = engine.start("plain", "run-1", "x", String.class);
            assertThat(h.await(WAIT)).isEqualTo("done x");
            assertThat(h.info().leaseOwner()).isNull();
        }
    }

    @Test
    void a_resume_loop_survives_a_listener_that_throws_an_error() throws Exception {
        CountDownLatch firstPass = new CountDownLatch(1);
        ResumeListener broken = new ResumeListener() {
            @Override
            public void onPass(ResumeSummary summary, Duration elapsed, long pendingAwakeables, long runnableBacklog) {
                firstPass.countDown();
                throw missingLibrary();
            }
        };
        try (WorkflowEngine engine = WorkflowTesting.fastEngine(store, registry).runOnStart(false).build();
                ResumeWorker worker = engine.resumeWorker(WorkflowTesting.fastResume().withListener(broken)).start()) {
            assertThat(firstPass.await(20, TimeUnit.SECONDS)).isTrue(); // the listener has thrown once
            WorkflowHandle<String> h = engine.start("plain", "resumed-1", "y", String.class); // left to the worker
            assertThat(h.await(WAIT)).isEqualTo("done y");
            assertThat(worker.owner()).isNotBlank();
        }
    }
}
