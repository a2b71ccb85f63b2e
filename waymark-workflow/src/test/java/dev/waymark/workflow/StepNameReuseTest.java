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
import dev.waymark.workflow.exception.InvalidWorkflowInputException;
import dev.waymark.workflow.exception.WorkflowFailedException;
import dev.waymark.workflow.resume.ResumeWorker;
import dev.waymark.workflow.status.JournalEntry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A name identifies one step of a run (DESIGN.md decision 4): a second use of it in one run is an
 * error naming it, never a silent replay of the first one's result; each kind of named operation
 * (step, sleep, awakeable, child) has its own names, and a patch gate may be asked again.
 */
class StepNameReuseTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static final WorkflowTesting.Effects effects = new WorkflowTesting.Effects();
    private static final Map<String, UUID> gates = new ConcurrentHashMap<>();

    private static EventStore store;
    private static WorkflowEngine engine;
    private static ResumeWorker worker;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        WorkflowRegistry registry = new WorkflowRegistry()
                // the loop of the report: three items, one step name
                .register("chargeAll", String.class, String.class, (ctx, in) -> {
                    int sum = 0;
                    for (int i = 0; i < 3; i++) {
                        sum += ctx.step("charge", Integer.class, () -> effects.hit(ctx.workflowId() + ":charge"));
                    }
                    return "charged " + sum;
                })
                .register("indexed", String.class, String.class, (ctx, in) -> {
                    int sum = 0;
                    for (int i = 0; i < 3; i++) {
                        sum += ctx.step("charge-" + i, Integer.class, () -> effects.hit(ctx.workflowId() + ":charge"));
                    }
                    return "charged " + sum;
                })
                .register("napTwice", String.class, String.class, (ctx, in) -> {
                    ctx.sleep("nap", Duration.ZERO);
                    ctx.sleep("nap", Duration.ofHours(1));
                    return "rested";
                })
                .register("twoGates", String.class, String.class, (ctx, in) -> {
                    ctx.awakeable("gate", String.class);
                    ctx.awakeable("gate", String.class);
                    return "two gates";
                })
                .register("leaf", String.class, String.class, (ctx, in) -> "leaf " + in)
                .register("twoChildren", String.class, String.class, (ctx, in) -> {
                    String a = ctx.child("ship", "leaf", ctx.workflowId() + ".1", "one", String.class).await();
                    String b = ctx.child("ship", "leaf", ctx.workflowId() + ".2", "two", String.class).await();
                    return a + "+" + b;
                })
                // the first use is replayed from the journal when the second comes
                .register("chargeAfterWait", String.class, String.class, (ctx, in) -> {
                    ctx.step("charge", Integer.class, () -> effects.hit(ctx.workflowId() + ":charge"));
                    Awakeable<String> gate = ctx.awakeable("gate", String.class);
                    ctx.step("publish", () -> {
                        gates.put(ctx.workflowId(), gate.id());
                        return null;
                    });
                    gate.await();
                    ctx.step("charge", Integer.class, () -> effects.hit(ctx.workflowId() + ":charge"));
                    return "unreachable";
                })
                // all valid: one name across kinds, a patch asked twice, a handle awaited twice
                .register("valid", String.class, String.class, (ctx, in) -> {
                    boolean first = ctx.patch("p");
                    String x = ctx.step("x", String.class, () -> "step " + effects.hit(ctx.workflowId() + ":x"));
                    ctx.sleep("x", Duration.ZERO);
                    Awakeable<String> gate = ctx.awakeable("x", String.class);
                    ctx.step("publish", () -> {
                        gates.put(ctx.workflowId(), gate.id());
                        return null;
                    });
                    String opened = gate.await() + "/" + gate.await();
                    String child = ctx.child("x", "leaf", ctx.workflowId() + ".x", "x", String.class).await();
                    return x + ", " + opened + ", " + child + ", patched " + (first == ctx.patch("p"));
                });
        engine = WorkflowTesting.fastEngine(store, registry).retry(WorkflowTesting.RETRY.withMaxAttempts(2)).build();
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

    private static String failureOf(String name, String id) {
        WorkflowHandle<String> h = engine.handle(name, id, String.class);
        assertThatThrownBy(() -> h.await(WAIT)).isInstanceOf(WorkflowFailedException.class);
        return h.info().failure();
    }

    @Test
    void a_step_name_used_twice_in_a_run_fails_it_naming_the_step_and_the_remedy_and_runs_the_action_once() {
        engine.start("chargeAll", "loop-1", "x", String.class);
        // before: completed "charged 3" with one charge, the first result handed to the other two
        assertThat(failureOf("chargeAll", "loop-1"))
                .contains(InvalidWorkflowInputException.class.getName())
                .contains("step 'charge' is used twice in one run of workflow chargeAll/loop-1")
                .contains("include an index or a key in the name");
        assertThat(effects.count("loop-1:charge")).isEqualTo(1);
    }

    @Test
    void names_with_an_index_are_distinct_steps() throws Exception {
        assertThat(engine.start("indexed", "idx-1", "x", String.class).await(WAIT)).isEqualTo("charged 6");
        assertThat(effects.count("idx-1:charge")).isEqualTo(3);
    }

    @Test
    void a_sleep_an_awakeable_or_a_child_used_twice_fails_the_run_too() {
        engine.start("napTwice", "nap-1", "x", String.class);
        engine.start("twoGates", "gates-1", "x", String.class);
        engine.start("twoChildren", "kids-1", "x", String.class);
        // before: the second sleep returned at once, the second awakeable was the first one, and the
        // second child was the first child (its result handed back, the second never started)
        assertThat(failureOf("napTwice", "nap-1")).contains("sleep 'nap' is used twice in one run");
        assertThat(failureOf("twoGates", "gates-1")).contains("awakeable 'gate' is used twice in one run");
        assertThat(failureOf("twoChildren", "kids-1")).contains("child step 'ship' is used twice in one run");
        assertThat(engine.describe("leaf", "kids-1.2")).isEmpty();
    }

    @Test
    void a_name_reused_after_a_replayed_first_use_fails_the_run_without_running_the_action_again() {
        engine.start("chargeAfterWait", "replay-1", "x", String.class);
        await().atMost(WAIT).until(() -> gates.containsKey("replay-1"));
        assertThat(engine.completeAwakeable(gates.get("replay-1"), "go")).isEqualTo(AwakeableOutcome.SETTLED);
        assertThat(failureOf("chargeAfterWait", "replay-1"))
                .contains("step 'charge' is used twice in one run of workflow chargeAfterWait/replay-1");
        assertThat(effects.count("replay-1:charge")).isEqualTo(1);
    }

    @Test
    void one_name_across_kinds_a_patch_asked_twice_and_a_handle_awaited_twice_replay_as_before() throws Exception {
        WorkflowHandle<String> h = engine.start("valid", "valid-1", "x", String.class);
        await().atMost(WAIT).until(() -> gates.containsKey("valid-1"));
        assertThat(engine.completeAwakeable(gates.get("valid-1"), "open")).isEqualTo(AwakeableOutcome.SETTLED);
        assertThat(h.await(WAIT)).isEqualTo("step 1, open/open, leaf x, patched true");
        assertThat(effects.count("valid-1:x")).isEqualTo(1);
        assertThat(engine.describe("valid", "valid-1").orElseThrow().journal()).extracting(JournalEntry::step)
                .filteredOn(s -> s != null)
                .containsExactlyInAnyOrderElementsOf(List.of("patch:p", "x", "sleepat:x", "sleep:x", "awkid:x",
                        "publish", "awk:x", "child:x", "child:x:result"));
    }
}
