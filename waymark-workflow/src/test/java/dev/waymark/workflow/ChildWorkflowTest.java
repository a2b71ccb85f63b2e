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
import dev.waymark.workflow.child.ChildHandle;
import dev.waymark.workflow.child.ChildWorkflowCancelledException;
import dev.waymark.workflow.child.ChildWorkflowFailedException;
import dev.waymark.workflow.exception.InvalidWorkflowInputException;
import dev.waymark.workflow.exception.UnknownWorkflowException;
import dev.waymark.workflow.exception.WorkflowCancelledException;
import dev.waymark.workflow.exception.WorkflowFailedException;
import dev.waymark.workflow.internal.Instances;
import dev.waymark.workflow.listener.WorkflowListener;
import dev.waymark.workflow.resume.ResumeWorker;
import dev.waymark.workflow.status.CancelOutcome;
import dev.waymark.workflow.status.WorkflowDetails;
import dev.waymark.workflow.status.WorkflowInfo;
import dev.waymark.workflow.status.WorkflowOutcome;
import dev.waymark.workflow.status.WorkflowStatus;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class ChildWorkflowTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static final WorkflowTesting.Effects effects = new WorkflowTesting.Effects();

    private static EventStore store;
    private static WorkflowEngine engine;
    private static ResumeWorker worker;
    private static final java.util.Map<String, UUID> gates = new java.util.concurrent.ConcurrentHashMap<>();
    private static final java.util.Map<String, Throwable> runErrors = new java.util.concurrent.ConcurrentHashMap<>();
    private static final CountDownLatch inBody = new CountDownLatch(1);
    private static final CountDownLatch release = new CountDownLatch(1);

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        WorkflowRegistry registry = new WorkflowRegistry()
                .register("level", Integer.class, String.class, (ctx, depth) -> {
                    effects.hit(ctx.workflowId() + ":body");
                    String below = depth == 0
                            ? "leaf"
                            : ctx.child("below", "level", ctx.workflowId() + ".c", depth - 1, String.class).await();
                    return ctx.step("wrap", String.class, () -> depth + "(" + below + ")");
                })
                .register("doomed", String.class, String.class, (ctx, in) -> {
                    throw new IllegalStateException("warehouse " + in + " is on fire");
                })
                .register("careful", String.class, String.class, (ctx, in) -> {
                    try {
                        return ctx.child("ship", "doomed", ctx.workflowId() + ".ship", in, String.class).await();
                    } catch (ChildWorkflowFailedException e) {
                        return "fallback after " + e.childId() + ": " + e.reason();
                    }
                })
                .register("blocked", String.class, String.class,
                        (ctx, in) -> ctx.awakeable("never", String.class).await())
                .register("chain", Integer.class, String.class, (ctx, depth) -> depth == 0
                        ? ctx.child("leaf", "blocked", ctx.workflowId() + ".leaf", "x", String.class).await()
                        : ctx.child("next", "chain", ctx.workflowId() + ".c", depth - 1, String.class).await())
                // a child id made afresh on every run: replay must follow the journaled one
                .register("freshChild", String.class, String.class,
                        (ctx, in) -> ctx.child("c", "level", UUID.randomUUID().toString(), 0, String.class).await())
                // awaits an instance it did not create (it existed before: the spawn attaches)
                .register("attacher", String.class, String.class,
                        (ctx, in) -> "attached: " + ctx.child("c", "gated", "shared-" + in, "x", String.class).await())
                .register("gated", String.class, String.class, (ctx, in) -> {
                    Awakeable<String> gate = ctx.awakeable("gate", String.class);
                    ctx.step("publish", () -> {
                        gates.put(ctx.workflowId(), gate.id());
                        return null;
                    });
                    return gate.await();
                })
                // a step, then plain code held by a latch, then a child
                .register("lateSpawner", String.class, String.class, (ctx, in) -> {
                    ctx.step("a", Integer.class, () -> 1);
                    inBody.countDown();
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new IllegalStateException(e);
                    }
                    return ctx.child("late", "blocked", ctx.workflowId() + ".late", "x", String.class).await();
                })
                // a second child whose step name is the first one's result key
                .register("resultClash", String.class, String.class, (ctx, in) -> {
                    ChildHandle<String> a = ctx.child("a", "level", ctx.workflowId() + ".k1", 0, String.class);
                    ctx.child("a:result", "level", ctx.workflowId() + ".k2", 0, String.class);
                    return a.await();
                })
                .register("cancelAware", String.class, String.class, (ctx, in) -> {
                    try {
                        return ctx.child("wait", "blocked", ctx.workflowId() + ".b", "x", String.class).await();
                    } catch (ChildWorkflowCancelledException e) {
                        return "child cancelled";
                    }
                });
        engine = WorkflowTesting.fastEngine(store, registry).retry(WorkflowTesting.RETRY.withMaxAttempts(2))
                .listener(new WorkflowListener() {
                    @Override
                    public void runFinished(String name, String id, WorkflowOutcome<?> outcome, Throwable error,
                            Duration elapsed) {
                        if (error != null) {
                            runErrors.put(name + "/" + id, error);
                        }
                    }
                }).build();
        worker = engine.resumeWorker(
                WorkflowTesting.fastResume().toBuilder().retry(WorkflowTesting.RETRY.withMaxAttempts(2)).build())
                .start();
    }

    @AfterAll
    static void tearDown() {
        worker.close();
        engine.close();
        store.close();
    }

    @Test
    void a_three_level_chain_completes_and_each_child_is_spawned_once() throws Exception {
        WorkflowHandle<String> h = engine.start("level", "p", 2, String.class);
        assertThat(h.await(WAIT)).isEqualTo("2(1(0(leaf)))");
        WorkflowDetails root = engine.describe("level", "p").orElseThrow();
        assertThat(root.children()).extracting(WorkflowInfo::id).containsExactly("p.c");
        assertThat(engine.describe("level", "p.c").orElseThrow().children()).extracting(WorkflowInfo::id)
                .containsExactly("p.c.c");
        assertThat(engine.handle("level", "p.c.c", String.class).info().parentId()).isEqualTo("p.c");
        // re-invocations of the parents replayed the spawn instead of spawning again
        assertThat(root.journal()).filteredOn(e -> "child:below".equals(e.step())).hasSize(1);
    }

    @Test
    void a_child_failure_reaches_the_parent_as_a_typed_exception() throws Exception {
        WorkflowHandle<String> h = engine.start("careful", "k", "north", String.class);
        assertThat(h.await(WAIT)).startsWith("fallback after k.ship: crashed 2 times; last error: "
                + "java.lang.IllegalStateException: warehouse north is on fire");
        assertThat(engine.handle("doomed", "k.ship", String.class).status()).isEqualTo(WorkflowStatus.FAILED);
    }

    @Test
    void cancelling_the_parent_cancels_the_whole_chain() throws Exception {
        WorkflowHandle<String> h = engine.start("chain", "z", 2, String.class);
        await().atMost(WAIT).until(() -> engine.describe("blocked", "z.c.c.leaf").map(d -> d.info().status())
                .orElse(null) == WorkflowStatus.SUSPENDED);
        assertThat(h.cancel()).isEqualTo(CancelOutcome.CANCELLED);
        assertThat(h.cancel()).isEqualTo(CancelOutcome.ALREADY_CANCELLED);
        for (String[] k : new String[][]{{"chain", "z"}, {"chain", "z.c"}, {"chain", "z.c.c"},
                {"blocked", "z.c.c.leaf"}}) {
            assertThat(engine.handle(k[0], k[1], String.class).status()).as(k[1]).isEqualTo(WorkflowStatus.CANCELLED);
        }
        assertThatThrownBy(() -> h.await(WAIT)).isInstanceOf(WorkflowCancelledException.class);
    }

    @Test
    void a_cancelled_child_reaches_its_parent_as_a_typed_cancellation() throws Exception {
        WorkflowHandle<String> h = engine.start("cancelAware", "ca", "x", String.class);
        await().atMost(WAIT).until(() -> engine.describe("blocked", "ca.b").map(d -> d.info().status())
                .orElse(null) == WorkflowStatus.SUSPENDED);
        assertThat(engine.cancel("blocked", "ca.b")).isEqualTo(CancelOutcome.CANCELLED);
        assertThat(h.await(WAIT)).isEqualTo("child cancelled");
    }

    @Test
    void a_replay_follows_the_journaled_child_when_the_call_makes_a_new_id() throws Exception {
        // before: the handle took this run's new random id, found no such child and crashed the parent
        assertThat(engine.start("freshChild", "fc", "x", String.class).await(WAIT)).isEqualTo("0(leaf)");
    }

    @Test
    void a_parent_attached_to_an_instance_it_did_not_create_learns_its_end() throws Exception {
        engine.start("gated", "shared-1", "x", String.class);
        await().atMost(WAIT).until(() -> gates.containsKey("shared-1"));
        WorkflowHandle<String> parent = engine.start("attacher", "att-1", "1", String.class);
        await().atMost(WAIT).until(() -> parent.status() == WorkflowStatus.SUSPENDED);
        assertThat(engine.completeAwakeable(gates.get("shared-1"), "opened")).isEqualTo(AwakeableOutcome.SETTLED);
        // before: the instance's end woke only its own parent (none), and this one waited for ever
        assertThat(parent.await(WAIT)).isEqualTo("attached: opened");
    }

    @Test
    void attaching_to_an_existing_instance_with_another_input_is_a_clear_failure() throws Exception {
        engine.start("gated", "shared-2", "other input", String.class);
        WorkflowHandle<String> parent = engine.start("attacher", "att-2", "2", String.class);
        assertThatThrownBy(() -> parent.await(WAIT)).isInstanceOf(WorkflowFailedException.class)
                .hasMessageContaining("child workflow gated/shared-2 of attacher/att-2 already exists")
                .hasMessageContaining("with a different input");
    }

    @Test
    void a_body_that_has_not_noticed_its_cancellation_spawns_no_child() throws Exception {
        WorkflowHandle<String> h = engine.start("lateSpawner", "ls", "x", String.class);
        assertThat(inBody.await(30, TimeUnit.SECONDS)).isTrue();
        // cancelled by a process whose announcement never reaches the engine (its store sends no
        // NOTIFY, as when the message is lost), so nothing stops the body before its spawn
        try (EventStore quiet = EventStore.builder(POSTGRES.newDataSource(2)).notifications(false).build()) {
            assertThat(WorkflowClient.create(quiet).cancel("lateSpawner", "ls")).isEqualTo(CancelOutcome.CANCELLED);
        } // no child yet: nothing to cascade to
        release.countDown(); // the body goes on and tries to spawn its child
        Instances.Key parent = new Instances.Key("lateSpawner", "ls");
        await().atMost(WAIT).until(() -> !engine.client().runsHere(parent));
        assertThatThrownBy(() -> h.await(WAIT)).isInstanceOf(WorkflowCancelledException.class);
        // before: the child was created, and only the parent's run cancelled it once it found itself
        // cancelled (a parent process dying in between left the child running with nobody to cancel it)
        assertThat(engine.describe("blocked", "ls.late")).isEmpty();
        // the refused spawn stopped the run as cancelled, not with a crash
        assertThat(runErrors).doesNotContainKey("lateSpawner/ls");
    }

    @Test
    void a_child_step_name_ending_in_result_is_refused_before_it_can_shadow_another_childs_result() {
        WorkflowHandle<String> h = engine.start("resultClash", "rc", "x", String.class);
        // before: the second spawn was journaled under child:a:result, and a.await() read that entry
        // as child a's outcome (ChildWorkflowCancelledException, for a child that completed)
        assertThatThrownBy(() -> h.await(WAIT)).isInstanceOf(WorkflowFailedException.class)
                .hasMessageContaining(InvalidWorkflowInputException.class.getName())
                .hasMessageContaining("child step name 'a:result' ends with ':result', which is reserved");
        assertThat(engine.describe("level", "rc.k2")).isEmpty();
        assertThatThrownBy(() -> WorkflowNames.requireChildStepName("a:result"))
                .isInstanceOf(InvalidWorkflowInputException.class);
        assertThat(WorkflowNames.requireChildStepName("a:results")).isEqualTo("a:results");
    }

    @Test
    void spawning_an_unregistered_child_is_a_clear_error() {
        assertThatThrownBy(() -> engine.start("nope", "x", "x", String.class))
                .isInstanceOf(UnknownWorkflowException.class);
    }
}
