package dev.waymark.workflow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.waymark.store.EventStore;
import dev.waymark.testkit.PostgresExtension;
import dev.waymark.workflow.resume.ResumeWorker;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class ChildWorkflowTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = new PostgresExtension();

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final WorkflowTesting.Effects effects = new WorkflowTesting.Effects();

    private static EventStore store;
    private static WorkflowEngine engine;
    private static ResumeWorker worker;

    @BeforeAll
    static void setUp() {
        store = WorkflowTesting.migratedStore(POSTGRES);
        WorkflowRegistry registry = new WorkflowRegistry()
                .register("level", Integer.class, String.class, (ctx, depth) -> {
                    effects.hit(ctx.workflowId() + ":body");
                    String below = depth == 0 ? "leaf"
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
                .register("blocked", String.class, String.class, (ctx, in) ->
                        ctx.awakeable("never", String.class).await())
                .register("chain", Integer.class, String.class, (ctx, depth) -> depth == 0
                        ? ctx.child("leaf", "blocked", ctx.workflowId() + ".leaf", "x", String.class).await()
                        : ctx.child("next", "chain", ctx.workflowId() + ".c", depth - 1, String.class).await())
                .register("cancelAware", String.class, String.class, (ctx, in) -> {
                    try {
                        return ctx.child("wait", "blocked", ctx.workflowId() + ".b", "x", String.class).await();
                    } catch (ChildWorkflowCancelledException e) {
                        return "child cancelled";
                    }
                });
        engine = WorkflowTesting.fastEngine(store, registry).maxAttempts(2).build();
        worker = engine.resumeWorker(WorkflowTesting.fastResume().withMaxAttempts(2)).start();
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
        for (String[] k : new String[][] {{"chain", "z"}, {"chain", "z.c"}, {"chain", "z.c.c"}, {"blocked", "z.c.c.leaf"}}) {
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
    void spawning_an_unregistered_child_is_a_clear_error() {
        assertThatThrownBy(() -> engine.start("nope", "x", "x", String.class))
                .isInstanceOf(UnknownWorkflowException.class);
    }
}
