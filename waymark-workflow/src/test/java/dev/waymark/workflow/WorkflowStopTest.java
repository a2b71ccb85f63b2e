package dev.waymark.workflow;

import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.waymark.core.Stoppable;
import dev.waymark.store.EventStore;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import dev.waymark.workflow.resume.ResumeOptions;
import dev.waymark.workflow.resume.ResumeWorker;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The {@link Stoppable} contract of the workflow engine, the resume worker and the collector:
 * {@code stop(timeout)} answers whether everything stopped in time, a second call answers for the
 * same stop, and an interrupt of the caller ends the wait.
 */
class WorkflowStopTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    /** Counted down when the "stubborn" step is entered; set per test. */
    private static volatile CountDownLatch entered = new CountDownLatch(1);
    /** What the "stubborn" step waits for, ignoring interrupts; set per test. */
    private static volatile CountDownLatch release = new CountDownLatch(1);

    private static EventStore store;
    private static WorkflowRegistry registry;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        registry = new WorkflowRegistry()
                .register("stubborn", String.class, String.class, (ctx, in) -> ctx.step("work", String.class, () -> {
                    entered.countDown();
                    CountDownLatch r = release;
                    while (r.getCount() > 0) {
                        try {
                            r.await(); // uninterruptible work, as blocking I/O can be
                        } catch (InterruptedException ignored) {
                            // keeps waiting
                        }
                    }
                    return "done " + in;
                }))
                .register("plain", String.class, String.class, (ctx, in) -> ctx.step("echo", String.class, () -> in));
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    @BeforeEach
    void latches() {
        entered = new CountDownLatch(1);
        release = new CountDownLatch(1);
    }

    @Test
    void an_idle_engine_stops_in_time_with_its_workers_and_a_second_stop_answers_the_same() throws Exception {
        WorkflowEngine engine = WorkflowEngine.builder(store, registry).build();
        ResumeWorker worker = engine.resumeWorker(ResumeOptions.builder().pollInterval(Duration.ofMillis(50)).build())
                .start();
        assertThat(engine.start("plain", "idle-1", "x", String.class).await(WAIT)).isEqualTo("x");
        Stoppable stoppable = engine;
        assertThat(stoppable.stop(Duration.ofSeconds(5))).isTrue();
        assertThat(engine.stop(Duration.ZERO)).as("a second call answers for the same stop").isTrue();
        assertThat(worker.stop(Duration.ZERO)).as("the engine's stop stopped its worker").isTrue();
        engine.close(); // nothing more to do
        assertThatThrownBy(() -> engine.stop(Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("workflow engine stop timeout must be >= 0, got PT-0.001S");
    }

    @Test
    void engine_stop_answers_false_while_a_step_ignores_its_interrupt_and_true_once_it_returned() throws Exception {
        WorkflowEngine engine = WorkflowEngine.builder(store, registry).build();
        try {
            engine.start("stubborn", "engine-1", "x", String.class);
            assertThat(entered.await(WAIT.toSeconds(), TimeUnit.SECONDS)).as("the run is in its step").isTrue();
            AtomicReference<Boolean> first = new AtomicReference<>();
            Thread stopper = Thread.ofPlatform().name("engine-stopper")
                    .start(() -> first.set(engine.stop(Duration.ofMillis(100))));
            // the first stop waits for the run (its timeout, then the forced wait: the step ignores its interrupt)
            await().atMost(WAIT).until(() -> stopper.getState() == Thread.State.TIMED_WAITING);
            assertThat(engine.stop(Duration.ZERO)).as("a concurrent call starts no second stop; nothing ended yet")
                    .isFalse();
            stopper.join(WAIT.toMillis());
            assertThat(stopper.isAlive()).isFalse();
            assertThat(first.get()).as("the step still runs after the timeout and the forced wait").isFalse();
            release.countDown();
            assertThat(engine.stop(Duration.ofSeconds(10))).as("a later call, once the step returned").isTrue();
        } finally {
            release.countDown();
            engine.close();
        }
    }

    @Test
    void worker_stop_answers_false_while_an_attempt_ignores_its_interrupt_and_true_once_it_returned()
            throws Exception {
        try (WorkflowEngine engine = WorkflowEngine.builder(store, registry).runOnStart(false).build()) {
            ResumeWorker worker = engine.resumeWorker(ResumeOptions.builder().pollInterval(Duration.ofMillis(50))
                    .build()).start();
            try {
                engine.start("stubborn", "worker-1", "x", String.class);
                assertThat(entered.await(WAIT.toSeconds(), TimeUnit.SECONDS)).as("the attempt is in its step")
                        .isTrue();
                assertThat(worker.stop(Duration.ofMillis(100))).as("the attempt ignores its interrupt").isFalse();
                assertThat(worker.inFlight()).isOne();
                release.countDown();
                assertThat(worker.stop(Duration.ofSeconds(10))).as("a later call, once the attempt returned").isTrue();
                assertThat(worker.inFlight()).isZero();
                assertThatThrownBy(() -> worker.stop(null)).isInstanceOf(IllegalArgumentException.class)
                        .hasMessage("resume worker stop timeout must be >= 0, got null");
            } finally {
                release.countDown();
            }
            assertThat(engine.stop(Duration.ofSeconds(10))).as("its worker stopped before").isTrue();
        }
    }

    @Test
    void an_interrupt_of_the_caller_ends_the_engines_wait_and_keeps_the_flag() throws Exception {
        WorkflowEngine engine = WorkflowEngine.builder(store, registry).build();
        try {
            engine.start("stubborn", "interrupted-1", "x", String.class);
            assertThat(entered.await(WAIT.toSeconds(), TimeUnit.SECONDS)).as("the run is in its step").isTrue();
            AtomicReference<Boolean> answer = new AtomicReference<>();
            AtomicBoolean flagKept = new AtomicBoolean();
            Thread stopper = Thread.ofPlatform().name("engine-stopper").start(() -> {
                answer.set(engine.stop(Duration.ofMinutes(10)));
                flagKept.set(Thread.currentThread().isInterrupted());
            });
            await().atMost(WAIT).until(() -> stopper.getState() == Thread.State.TIMED_WAITING);
            stopper.interrupt();
            stopper.join(WAIT.toMillis());
            assertThat(stopper.isAlive()).as("the interrupt ended the 10-minute wait").isFalse();
            assertThat(answer.get()).as("the step still runs").isFalse();
            assertThat(flagKept).isTrue();
            release.countDown();
            assertThat(engine.stop(Duration.ofSeconds(10))).as("a later call, once the step returned").isTrue();
        } finally {
            release.countDown();
            engine.close();
        }
    }

    @Test
    void a_collector_stops_in_time_and_a_second_stop_answers_the_same() {
        WorkflowCollector collector = WorkflowCollector.start(WorkflowClient.create(store), Duration.ofDays(1),
                Duration.ofMillis(20), 100);
        await().atMost(WAIT).until(() -> collector.lastPass().isPresent());
        Stoppable stoppable = collector;
        assertThat(stoppable.stop(Duration.ofSeconds(5))).isTrue();
        assertThat(collector.stop(Duration.ZERO)).as("a second call answers for the same stop").isTrue();
        collector.close();
        assertThatThrownBy(() -> collector.stop(Duration.ofSeconds(-1))).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("workflow collector stop timeout must be >= 0, got PT-1S");
    }
}
