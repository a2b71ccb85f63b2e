package dev.waymark.workflow;

import static dev.waymark.testkit.Waits.WAIT;
import static dev.waymark.workflow.WorkflowTesting.count;
import static dev.waymark.workflow.WorkflowTesting.execute;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.store.EventStore;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import dev.waymark.workflow.awakeable.Awakeable;
import dev.waymark.workflow.awakeable.AwakeableInfo;
import dev.waymark.workflow.awakeable.AwakeableOutcome;
import dev.waymark.workflow.exception.WorkflowLeaseLostException;
import dev.waymark.workflow.status.CancelOutcome;
import dev.waymark.workflow.status.WorkflowOutcome;
import dev.waymark.workflow.status.WorkflowStatus;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An awakeable is pending exactly when its id is journaled: a run whose id entry is refused (its
 * lease was taken over, its instance cancelled) leaves no awakeable row that nobody could ever
 * complete or find, and a run whose entry is written leaves exactly one.
 */
class AwakeableRowTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static final WorkflowTesting.Effects effects = new WorkflowTesting.Effects();
    private static final Map<String, CountDownLatch> gates = new ConcurrentHashMap<>();
    private static final Queue<Throwable> runErrors = new ConcurrentLinkedQueue<>();

    private static EventStore store;
    private static WorkflowEngine engine;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        WorkflowRegistry registry = new WorkflowRegistry().register("approval", String.class, String.class,
                (ctx, in) -> {
                    ctx.step("prepare", Integer.class, () -> effects.hit(ctx.workflowId() + ":prepare"));
                    effects.hit(ctx.workflowId() + ":between");
                    gates.get(ctx.workflowId()).await(); // the takeover or cancel lands here
                    Awakeable<String> a = ctx.awakeable("go", String.class);
                    return a.await();
                });
        engine = WorkflowTesting.fastEngine(store, registry).listener(WorkflowTesting.collectingErrors(runErrors))
                .build();
    }

    @AfterAll
    static void tearDown() {
        engine.close();
        store.close();
    }

    @Test
    void a_run_that_lost_its_lease_registers_no_awakeable() throws Exception {
        startAtGate("taken");
        // another worker takes the instance over while the run waits between its step and its awakeable
        execute(POSTGRES, "UPDATE waymark.workflows SET lease_owner = 'other-worker', lease_epoch = lease_epoch + 1,"
                + " lease_expires_at = now() + interval '1 hour' WHERE id = 'taken'");
        gates.get("taken").countDown();
        await().atMost(WAIT).until(() -> runErrors.stream().anyMatch(e -> e instanceof WorkflowLeaseLostException));
        assertThat(engine.describe("approval", "taken").orElseThrow().journal())
                .noneMatch(e -> "awkid:go".equals(e.step()));
        // before: a pending row no journal names (nobody can learn its id; only the pending gauge saw it)
        assertThat(rows("taken")).isZero();
    }

    @Test
    void a_cancelled_run_registers_no_awakeable() throws Exception {
        WorkflowHandle<String> h = startAtGate("cancelled");
        // cancelled by a process whose announcement never reaches the engine, so only the refused
        // journal write stops the body
        try (EventStore quiet = EventStore.builder(POSTGRES.newDataSource(2)).notifications(false).build()) {
            assertThat(WorkflowClient.create(quiet).cancel("approval", "cancelled")).isEqualTo(CancelOutcome.CANCELLED);
        }
        gates.get("cancelled").countDown();
        assertThat(h.awaitOutcome(WAIT)).isInstanceOf(WorkflowOutcome.Cancelled.class);
        assertThat(rows("cancelled")).isZero();
    }

    @Test
    void a_run_that_journals_the_id_registers_exactly_one_pending_awakeable() throws Exception {
        WorkflowHandle<String> h = startAtGate("kept");
        gates.get("kept").countDown();
        await().atMost(WAIT).until(() -> h.status() == WorkflowStatus.SUSPENDED);
        assertThat(rows("kept")).isEqualTo(1);
        AwakeableInfo pending = engine.describe("approval", "kept").orElseThrow().awakeables().getFirst();
        assertThat(pending.status()).isEqualTo("pending");
        assertThat(engine.completeAwakeable(pending.id(), "yes")).isEqualTo(AwakeableOutcome.SETTLED);
        assertThat(h.await(WAIT)).isEqualTo("yes");
    }

    private static WorkflowHandle<String> startAtGate(String id) {
        gates.put(id, new CountDownLatch(1));
        WorkflowHandle<String> h = engine.start("approval", id, "x", String.class);
        await().atMost(WAIT).until(() -> effects.count(id + ":between") == 1);
        return h;
    }

    private static long rows(String id) {
        return count(POSTGRES, "SELECT count(*) FROM waymark.workflow_awakeables WHERE id = '" + id + "'");
    }
}
