package dev.waymark.workflow;

import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.waymark.store.EventStore;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import dev.waymark.workflow.awakeable.Awakeable;
import dev.waymark.workflow.awakeable.AwakeableOutcome;
import dev.waymark.workflow.exception.WorkflowConfigException;
import dev.waymark.workflow.listener.WorkflowListener;
import dev.waymark.workflow.resume.ResumeWorker;
import dev.waymark.workflow.status.WorkflowOutcome;
import dev.waymark.workflow.status.WorkflowStatus;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Runs that wait in memory ({@link WorkflowEngineBuilder#holdWaits}): a short sleep and an awakeable
 * settled by another store handle go on in the same run (no suspension, no resume worker, no
 * replay) while the instance stays running under the engine's lease; the hold's limit, the engine's
 * stop and a cancellation each end the wait, and what was left in the database finishes the
 * workflow.
 */
class HeldWaitTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static final Map<String, UUID> published = new ConcurrentHashMap<>();
    private static final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
    private static final Map<String, AtomicInteger> replays = new ConcurrentHashMap<>();
    private static final Map<String, AtomicInteger> finished = new ConcurrentHashMap<>();
    private static final WorkflowListener COUNTING = new WorkflowListener() {
        @Override
        public void runStarted(String name, String id) {
            runs.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
        }

        @Override
        public void runFinished(String name, String id, WorkflowOutcome<?> outcome, Throwable error,
                Duration elapsed) {
            finished.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
        }

        @Override
        public void stepReplayed(String name, String step) {
            replays.computeIfAbsent(name, k -> new AtomicInteger()).incrementAndGet();
        }
    };

    private static EventStore store;
    /** Another handle on the same schema: its settlements reach the engine's process through NOTIFY. */
    private static EventStore otherHandle;
    private static WorkflowClient other;
    private static WorkflowRegistry registry;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        otherHandle = EventStore.builder(POSTGRES.dataSource()).build();
        other = WorkflowClient.create(otherHandle);
        registry = new WorkflowRegistry()
                .register("napper", Long.class, String.class, (ctx, millis) -> {
                    ctx.step("before", Integer.class, () -> 1);
                    ctx.sleep("nap", Duration.ofMillis(millis));
                    return "rested";
                })
                .register("approval", String.class, String.class, (ctx, in) -> {
                    Awakeable<String> decision = ctx.awakeable("decision", String.class);
                    ctx.step("publish", () -> {
                        published.put(ctx.workflowId(), decision.id());
                        return null;
                    });
                    return "approved by " + decision.await();
                });
    }

    @AfterAll
    static void tearDown() {
        otherHandle.close();
        store.close();
    }

    private static WorkflowEngine engine(Duration hold) {
        return WorkflowTesting.fastEngine(store, registry).listener(COUNTING).holdWaits(hold).build();
    }

    private static int runsOf(String id) {
        AtomicInteger n = runs.get(id);
        return n == null ? 0 : n.get();
    }

    @Test
    void a_short_sleep_goes_on_in_the_same_run_without_suspending() throws Exception {
        try (WorkflowEngine engine = engine(Duration.ofSeconds(30))) {
            long started = System.nanoTime();
            WorkflowHandle<String> h = engine.start("napper", "s-1", 1_500L, String.class);
            await().atMost(WAIT).until(() -> engine.heldWaits() == 1);
            assertThat(h.status()).isEqualTo(WorkflowStatus.RUNNING);
            assertThat(h.info().leaseOwner()).as("the held run keeps its lease").isEqualTo(engine.owner());
            assertThat(h.info().wakeAfter()).as("no suspension written").isNull();
            // no resume worker runs: the run itself goes on at the sleep's end
            assertThat(h.await(WAIT)).isEqualTo("rested");
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(1_500));
            assertThat(runsOf("s-1")).as("one run, no replay").isEqualTo(1);
            assertThat(engine.heldWaits()).isZero();
        }
    }

    @Test
    void a_sleep_longer_than_the_hold_is_left_to_the_database_at_once() throws Exception {
        try (WorkflowEngine engine = engine(Duration.ofMillis(200))) {
            WorkflowHandle<String> h = engine.start("napper", "s-2", Duration.ofHours(1).toMillis(), String.class);
            await().atMost(WAIT).until(() -> h.status() == WorkflowStatus.SUSPENDED && h.info().leaseOwner() == null);
            assertThat(runsOf("s-2")).isEqualTo(1);
        }
    }

    @Test
    void an_awakeable_settled_through_another_handle_resumes_the_held_run_in_place() throws Exception {
        try (WorkflowEngine engine = engine(Duration.ofSeconds(30))) {
            WorkflowHandle<String> h = engine.start("approval", "a-1", "x", String.class);
            await().atMost(WAIT).until(() -> published.containsKey("a-1") && engine.heldWaits() == 1);
            assertThat(h.status()).isEqualTo(WorkflowStatus.RUNNING);
            assertThat(h.info().leaseOwner()).isEqualTo(engine.owner());
            assertThat(other.completeAwakeable(published.get("a-1"), "alice")).isEqualTo(AwakeableOutcome.SETTLED);
            // well within the hold: the other handle's signal reached the engine's checker
            assertThat(h.await(Duration.ofSeconds(10))).isEqualTo("approved by alice");
            assertThat(runsOf("a-1")).as("one run, no replay").isEqualTo(1);
        }
    }

    @Test
    void an_awakeable_settled_through_the_engine_pokes_its_held_run() throws Exception {
        try (WorkflowEngine engine = engine(Duration.ofSeconds(30))) {
            WorkflowHandle<String> h = engine.start("approval", "a-2", "x", String.class);
            await().atMost(WAIT).until(() -> published.containsKey("a-2") && engine.heldWaits() == 1);
            assertThat(engine.completeAwakeable(published.get("a-2"), "bob")).isEqualTo(AwakeableOutcome.SETTLED);
            assertThat(h.await(Duration.ofSeconds(10))).isEqualTo("approved by bob");
            assertThat(runsOf("a-2")).isEqualTo(1);
        }
    }

    @Test
    void a_wait_past_the_hold_releases_the_lease_and_a_later_settlement_runs_it_again() throws Exception {
        try (WorkflowEngine engine = engine(Duration.ofMillis(300))) {
            WorkflowHandle<String> h = engine.start("approval", "a-3", "x", String.class);
            await().atMost(WAIT).until(() -> published.containsKey("a-3") && h.status() == WorkflowStatus.SUSPENDED
                    && h.info().leaseOwner() == null);
            assertThat(runsOf("a-3")).isEqualTo(1);
            assertThat(other.completeAwakeable(published.get("a-3"), "carol")).isEqualTo(AwakeableOutcome.SETTLED);
            try (ResumeWorker worker = engine.resumeWorker(WorkflowTesting.fastResume()).start()) {
                assertThat(h.await(WAIT)).isEqualTo("approved by carol");
            }
            assertThat(runsOf("a-3")).as("the first run, then the resumed one").isEqualTo(2);
        }
    }

    @Test
    void the_engines_stop_ends_held_waits_at_once_and_another_engine_finishes_them() throws Exception {
        WorkflowEngine first = engine(Duration.ofMinutes(5));
        WorkflowHandle<String> h = first.start("approval", "a-4", "x", String.class);
        await().atMost(WAIT).until(() -> published.containsKey("a-4") && first.heldWaits() == 1);
        long stopping = System.nanoTime();
        assertThat(first.stop(Duration.ofMinutes(1))).isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - stopping)).isLessThan(Duration.ofSeconds(10));
        assertThat(h.info().status()).as("the stop suspended the held wait").isEqualTo(WorkflowStatus.SUSPENDED);
        assertThat(h.info().waitingOn()).contains(published.get("a-4").toString());
        assertThat(h.info().leaseOwner()).as("released by the stop, not left to expire").isNull();
        assertThat(other.completeAwakeable(published.get("a-4"), "dave")).isEqualTo(AwakeableOutcome.SETTLED);
        try (WorkflowEngine second = engine(Duration.ofMinutes(5));
                ResumeWorker worker = second.resumeWorker(WorkflowTesting.fastResume()).start()) {
            assertThat(second.handle("approval", "a-4", String.class).await(WAIT)).isEqualTo("approved by dave");
        }
    }

    @Test
    void a_cancellation_ends_a_held_wait_long_before_its_limit() throws Exception {
        try (WorkflowEngine engine = engine(Duration.ofMinutes(5))) {
            WorkflowHandle<String> h = engine.start("approval", "a-5", "x", String.class);
            await().atMost(WAIT).until(() -> published.containsKey("a-5") && engine.heldWaits() == 1);
            other.cancel("approval", "a-5");
            assertThat(h.awaitOutcome(Duration.ofSeconds(20))).isInstanceOf(WorkflowOutcome.Cancelled.class);
            // the run itself ended (its wait was poked), not only the instance's row
            await().atMost(Duration.ofSeconds(20)).until(() -> finished.containsKey("a-5"));
            assertThat(runsOf("a-5")).isEqualTo(1);
        }
    }

    @Test
    void beyond_max_held_waits_a_wait_is_left_to_the_database() throws Exception {
        try (WorkflowEngine engine = WorkflowTesting.fastEngine(store, registry).holdWaits(Duration.ofMinutes(5))
                .maxHeldWaits(1).build()) {
            WorkflowHandle<String> held = engine.start("approval", "a-6", "x", String.class);
            await().atMost(WAIT).until(() -> published.containsKey("a-6") && engine.heldWaits() == 1);
            WorkflowHandle<String> left = engine.start("approval", "a-7", "x", String.class);
            await().atMost(WAIT)
                    .until(() -> left.status() == WorkflowStatus.SUSPENDED && left.info().leaseOwner() == null);
            assertThat(held.status()).isEqualTo(WorkflowStatus.RUNNING);
            assertThat(held.info().leaseOwner()).isEqualTo(engine.owner());
            assertThat(engine.heldWaits()).isEqualTo(1);
            assertThat(other.completeAwakeable(published.get("a-6"), "x")).isEqualTo(AwakeableOutcome.SETTLED);
            assertThat(held.await(Duration.ofSeconds(10))).isEqualTo("approved by x");
        }
    }

    @Test
    void hold_options_are_validated() {
        WorkflowEngineBuilder b = WorkflowEngine.builder(store, registry);
        assertThatThrownBy(() -> b.holdWaits(null)).isInstanceOf(WorkflowConfigException.class)
                .hasMessageContaining("holdWaits");
        assertThatThrownBy(() -> b.holdWaits(Duration.ofMillis(-1))).isInstanceOf(WorkflowConfigException.class);
        assertThatThrownBy(() -> b.holdWaits(Duration.ofMinutes(11))).isInstanceOf(WorkflowConfigException.class)
                .hasMessageContaining("PT10M");
        assertThatThrownBy(() -> b.maxHeldWaits(0)).isInstanceOf(WorkflowConfigException.class)
                .hasMessageContaining("maxHeldWaits");
        b.holdWaits(Duration.ZERO).maxHeldWaits(1); // zero turns holding off
    }
}
