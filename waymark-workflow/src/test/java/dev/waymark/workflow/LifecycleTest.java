package dev.waymark.workflow;

import static dev.waymark.testkit.Waits.WAIT;
import static dev.waymark.workflow.WorkflowTesting.count;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.waymark.store.EventStore;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import dev.waymark.workflow.awakeable.Awakeable;
import dev.waymark.workflow.awakeable.AwakeableOutcome;
import dev.waymark.workflow.exception.WorkflowException;
import dev.waymark.workflow.status.CancelOutcome;
import dev.waymark.workflow.status.JournalEntry;
import dev.waymark.workflow.status.RetryOutcome;
import dev.waymark.workflow.status.WorkflowInfo;
import dev.waymark.workflow.status.WorkflowOutcome;
import dev.waymark.workflow.status.WorkflowStatus;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Cancellation, continue-as-new, patches, retry and inspection. */
class LifecycleTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static final WorkflowTesting.Effects effects = new WorkflowTesting.Effects();
    private static final java.util.Map<String, UUID> awakeables = new java.util.concurrent.ConcurrentHashMap<>();
    private static volatile boolean newCode;

    record Counter(int round, long total) {}

    private static EventStore store;
    private static WorkflowEngine engine;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        WorkflowRegistry registry = new WorkflowRegistry()
                .register("looper", Counter.class, Long.class, (ctx, c) -> {
                    long add = ctx.step("add", Long.class, () -> {
                        effects.hit(ctx.workflowId() + ":add:" + c.round());
                        return (long) c.round();
                    });
                    if (c.round() == 1000) {
                        return c.total() + add;
                    }
                    ctx.continueAsNew(new Counter(c.round() + 1, c.total() + add));
                    return -1L;
                })
                .register("waiter", String.class, String.class, (ctx, in) -> {
                    ctx.step("one", Integer.class, () -> effects.hit(ctx.workflowId() + ":one"));
                    Awakeable<String> a = ctx.awakeable("go", String.class);
                    ctx.step("publish", () -> {
                        awakeables.put(ctx.workflowId(), a.id());
                        return null;
                    });
                    a.await();
                    ctx.step("two", Integer.class, () -> effects.hit(ctx.workflowId() + ":two"));
                    return "done";
                })
                .register("rotatingWaiter", Integer.class, String.class, (ctx, round) -> {
                    Awakeable<String> a = ctx.awakeable("go", String.class);
                    ctx.step("publish", () -> {
                        awakeables.put(ctx.workflowId() + "#" + round, a.id());
                        return null;
                    });
                    if (round == 0) {
                        ctx.continueAsNew(1);
                    }
                    return a.await();
                })
                .register("patched", String.class, String.class, (ctx, in) -> {
                    ctx.step("a", Integer.class, () -> 1);
                    boolean patched = newCode && ctx.patch("v2-shipping");
                    Awakeable<String> gate = ctx.awakeable("gate", String.class);
                    ctx.step("publish", () -> {
                        awakeables.put(ctx.workflowId(), gate.id());
                        return null;
                    });
                    gate.await();
                    return patched ? "new branch" : "old branch";
                })
                // its publish step fails on the first attempt (with maxAttempts 1: the workflow fails)
                .register("retriedWaiter", String.class, String.class, (ctx, in) -> {
                    Awakeable<String> a = ctx.awakeable("ok", String.class);
                    ctx.step("publish", () -> {
                        if (effects.hit(ctx.workflowId() + ":publish") == 1) {
                            throw new IllegalStateException("broker down");
                        }
                        awakeables.put(ctx.workflowId(), a.id());
                        return null;
                    });
                    return a.await();
                })
                // a finished sleep, then an awakeable, then a patch: new code all along
                .register("sleptPatched", String.class, String.class, (ctx, in) -> {
                    ctx.sleep("nap", Duration.ZERO);
                    Awakeable<String> gate = ctx.awakeable("gate", String.class);
                    ctx.step("publish", () -> {
                        awakeables.put(ctx.workflowId(), gate.id());
                        return null;
                    });
                    gate.await();
                    return ctx.patch("v2") ? "new" : "old";
                })
                // listed by the paging test only: no other test starts one
                .register("paged", String.class, String.class, (ctx, in) -> in)
                .register("flaky", String.class, String.class, (ctx, in) -> {
                    ctx.step("before", Integer.class, () -> effects.hit(ctx.workflowId() + ":before"));
                    if (effects.hit(ctx.workflowId() + ":attempt") <= 2) {
                        throw new IllegalStateException("not yet");
                    }
                    return "finally";
                });
        engine = WorkflowTesting.fastEngine(store, registry).retry(WorkflowTesting.RETRY.withMaxAttempts(1)).build();
    }

    @AfterAll
    static void tearDown() {
        engine.close();
        store.close();
    }

    @Test
    void a_thousand_generations_run_with_a_bounded_journal_per_generation() throws Exception {
        WorkflowHandle<Long> h = engine.start("looper", "loop", new Counter(0, 0), Long.class);
        assertThat(h.await(WAIT)).isEqualTo(500_500L);
        assertThat(h.info().generation()).isEqualTo(1000);
        for (int round = 0; round <= 1000; round++) {
            assertThat(effects.count("loop:add:" + round)).isEqualTo(1);
        }
        // each generation holds its start, its one step and its closing marker: never more
        assertThat(count(POSTGRES,
                "SELECT max(n) FROM (SELECT count(*) AS n FROM waymark.events e JOIN waymark.streams s"
                        + " ON s.stream_id = e.stream_id WHERE s.stream_name LIKE '$wf-looper-loop%' GROUP BY s.stream_id) x"))
                .isEqualTo(3);
        assertThat(count(POSTGRES, "SELECT count(*) FROM waymark.streams WHERE stream_name LIKE '$wf-looper-loop%'"))
                .isEqualTo(1001);
        assertThat(engine.describe("looper", "loop").orElseThrow().journal()).extracting(JournalEntry::type)
                .containsExactly("WorkflowStarted", "StepRecorded", "WorkflowCompleted");
    }

    @Test
    void continue_as_new_abandons_the_awakeables_of_the_closed_generation() throws Exception {
        WorkflowHandle<String> h = engine.start("rotatingWaiter", "rw", 0, String.class);
        await().atMost(WAIT).until(() -> h.status() == WorkflowStatus.SUSPENDED);
        UUID old = awakeables.get("rw#0");
        UUID current = awakeables.get("rw#1");
        assertThat(old).isNotEqualTo(current);
        assertThat(engine.completeAwakeable(old, "stale")).isEqualTo(AwakeableOutcome.SUPERSEDED);
        assertThat(engine.completeAwakeable(current, "fresh")).isEqualTo(AwakeableOutcome.SETTLED);
        assertThat(h.await(WAIT)).isEqualTo("fresh");
    }

    @Test
    void cancel_stops_a_suspended_workflow_and_reports_terminal_states() throws Exception {
        WorkflowHandle<String> h = engine.start("waiter", "w-1", "x", String.class);
        await().atMost(WAIT).until(() -> h.status() == WorkflowStatus.SUSPENDED);
        assertThat(engine.cancel("waiter", "w-1")).isEqualTo(CancelOutcome.CANCELLED);
        assertThat(engine.cancel("waiter", "w-1")).isEqualTo(CancelOutcome.ALREADY_CANCELLED);
        assertThat(engine.cancel("waiter", "missing")).isEqualTo(CancelOutcome.UNKNOWN);
        assertThat(count(POSTGRES, "SELECT count(*) FROM waymark.workflows WHERE id = 'missing'")).isZero();
        // a late completion finds nobody waiting; the body never runs its second step
        assertThat(engine.completeAwakeable(awakeables.get("w-1"), "late")).isEqualTo(AwakeableOutcome.SUPERSEDED);
        assertThat(engine.runNow("waiter", "w-1")).isFalse();
        assertThat(effects.count("w-1:two")).isZero();
        assertThat(h.awaitOutcome(WAIT)).isInstanceOf(WorkflowOutcome.Cancelled.class);

        WorkflowHandle<String> done = engine.start("waiter", "w-2", "x", String.class);
        await().atMost(WAIT).until(() -> awakeables.containsKey("w-2"));
        engine.completeAwakeable(awakeables.get("w-2"), "go");
        assertThat(done.await(WAIT)).isEqualTo("done");
        assertThat(engine.cancel("waiter", "w-2")).isEqualTo(CancelOutcome.ALREADY_COMPLETED);
    }

    @Test
    void a_patch_is_false_for_in_flight_instances_and_true_for_new_ones() throws Exception {
        newCode = false;
        WorkflowHandle<String> old = engine.start("patched", "old", "x", String.class);
        await().atMost(WAIT).until(() -> old.status() == WorkflowStatus.SUSPENDED);
        newCode = true; // deploy: the patch call appears before steps the old instance already journaled
        WorkflowHandle<String> fresh = engine.start("patched", "fresh", "x", String.class);
        await().atMost(WAIT).until(() -> fresh.status() == WorkflowStatus.SUSPENDED);
        engine.completeAwakeable(awakeables.get("old"), "go");
        engine.completeAwakeable(awakeables.get("fresh"), "go");
        assertThat(old.await(WAIT)).isEqualTo("old branch");
        assertThat(fresh.await(WAIT)).isEqualTo("new branch");
        assertThat(engine.describe("patched", "old").orElseThrow().journal())
                .filteredOn(e -> "patch:v2-shipping".equals(e.step())).singleElement()
                .satisfies(e -> assertThat(e.data()).contains("false"));
    }

    @Test
    void a_failed_workflow_can_be_retried_and_resumes_where_it_failed() throws Exception {
        WorkflowHandle<String> h = engine.start("flaky", "f-1", "x", String.class);
        await().atMost(WAIT).until(() -> h.status() == WorkflowStatus.FAILED);
        assertThat(h.info().failure()).contains("not yet");
        assertThat(engine.retry("flaky", "f-1")).isEqualTo(RetryOutcome.RETRIED);
        assertThat(engine.retry("flaky", "f-1")).isIn(RetryOutcome.NOT_FAILED, RetryOutcome.RETRIED);
        await().atMost(WAIT).until(() -> engine.runNow("flaky", "f-1") || h.status() == WorkflowStatus.FAILED);
        if (h.status() == WorkflowStatus.FAILED) {
            engine.retry("flaky", "f-1");
            await().atMost(WAIT).until(() -> engine.runNow("flaky", "f-1"));
        }
        assertThat(h.await(WAIT)).isEqualTo("finally");
        assertThat(effects.count("f-1:before")).isEqualTo(1);
        assertThat(engine.retry("flaky", "nope")).isEqualTo(RetryOutcome.UNKNOWN);
    }

    @Test
    void a_retried_workflow_is_woken_by_the_awakeable_it_was_waiting_for() throws Exception {
        WorkflowHandle<String> h = engine.start("retriedWaiter", "rw-1", "x", String.class);
        await().atMost(WAIT).until(() -> h.status() == WorkflowStatus.FAILED);
        assertThat(engine.retry("retriedWaiter", "rw-1")).isEqualTo(RetryOutcome.RETRIED);
        await().atMost(WAIT).until(() -> {
            engine.runNow("retriedWaiter", "rw-1"); // runs it if nothing has yet
            return h.status() == WorkflowStatus.SUSPENDED;
        });
        // before: the failure had abandoned the awakeable for good: "superseded", and the retried
        // await read it as cancelled and failed again
        assertThat(engine.completeAwakeable(awakeables.get("rw-1"), "delivered")).isEqualTo(AwakeableOutcome.SETTLED);
        assertThat(h.await(WAIT)).isEqualTo("delivered");
    }

    @Test
    void a_patch_after_a_replayed_sleep_is_true_for_a_new_instance() throws Exception {
        WorkflowHandle<String> h = engine.start("sleptPatched", "sp-1", "x", String.class);
        await().atMost(WAIT).until(() -> awakeables.containsKey("sp-1") && h.status() == WorkflowStatus.SUSPENDED);
        assertThat(engine.completeAwakeable(awakeables.get("sp-1"), "go")).isEqualTo(AwakeableOutcome.SETTLED);
        // before: the replayed sleep left its wake-time entry unvisited, so the patch saw history ahead
        assertThat(h.await(WAIT)).isEqualTo("new");
    }

    @Test
    void a_handle_to_an_instance_that_does_not_exist_throws_instead_of_waiting_for_it() {
        WorkflowClient client = WorkflowClient.create(store);
        for (WorkflowHandle<String> h : List.of(engine.handle("waiter", "never-started", String.class),
                client.handle("waiter", "never-started", String.class))) {
            assertThatThrownBy(h::status).isInstanceOf(WorkflowException.class)
                    .hasMessage("workflow waiter/never-started does not exist (never started, or collected)");
            // a timeout it would otherwise run into is not what it throws
            assertThatThrownBy(() -> h.awaitOutcome(Duration.ofSeconds(2))).isInstanceOf(WorkflowException.class)
                    .hasMessageContaining("does not exist");
            assertThatThrownBy(() -> h.await(Duration.ofSeconds(2))).isInstanceOf(WorkflowException.class)
                    .hasMessageContaining("does not exist");
        }
    }

    @Test
    void instances_are_listed_in_stable_pages_with_filters() {
        List<String> ids = List.of("page-0", "page-1", "page-2", "page-3", "page-4");
        for (String id : ids) {
            engine.start("paged", id, "x", String.class);
        }
        List<WorkflowInfo> first = engine.list(WorkflowQuery.builder().name("paged").limit(2).build());
        assertThat(first).extracting(WorkflowInfo::id).containsExactly("page-0", "page-1");
        WorkflowInfo last = first.get(1);
        List<WorkflowInfo> second = engine.list(WorkflowQuery.builder().name("paged").limit(100).build().after(last));
        // together the pages hold every instance once, in (name, id) order; an empty second page fails
        List<String> both = new java.util.ArrayList<>(first.stream().map(WorkflowInfo::id).toList());
        second.forEach(i -> both.add(i.id()));
        assertThat(both).containsExactlyElementsOf(ids);
        assertThat(second).extracting(WorkflowInfo::name).containsOnly("paged");
        assertThat(
                engine.list(WorkflowQuery.builder().status(WorkflowStatus.COMPLETED).name("nothing").limit(10).build()))
                .isEmpty();
    }
}
