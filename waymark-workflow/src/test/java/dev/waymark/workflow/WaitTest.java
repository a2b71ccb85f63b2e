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
import dev.waymark.workflow.awakeable.AwakeableCancelledException;
import dev.waymark.workflow.awakeable.AwakeableFailedException;
import dev.waymark.workflow.awakeable.AwakeableOutcome;
import dev.waymark.workflow.exception.InvalidWorkflowInputException;
import dev.waymark.workflow.resume.ResumeWorker;
import dev.waymark.workflow.status.WorkflowStatus;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Durable sleep and awakeables, in one process (the cross-JVM cases live in the process tests). */
class WaitTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static final WorkflowTesting.Effects effects = new WorkflowTesting.Effects();
    private static final java.util.Map<String, UUID> published = new java.util.concurrent.ConcurrentHashMap<>();

    private static EventStore store;
    private static WorkflowEngine engine;
    private static WorkflowClient client;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        WorkflowRegistry registry = new WorkflowRegistry()
                .register("napper", Long.class, String.class, (ctx, millis) -> {
                    ctx.step("before", Integer.class, () -> effects.hit(ctx.workflowId() + ":before"));
                    ctx.sleep("nap", Duration.ofMillis(millis));
                    ctx.step("after", Integer.class, () -> effects.hit(ctx.workflowId() + ":after"));
                    return "rested";
                })
                .register("approval", String.class, String.class, (ctx, in) -> {
                    Awakeable<String> decision = ctx.awakeable("decision", String.class);
                    ctx.step("publish", () -> {
                        published.put(ctx.workflowId(), decision.id());
                        return null;
                    });
                    try {
                        return "approved by " + decision.await();
                    } catch (AwakeableFailedException e) {
                        return "rejected: " + e.reason();
                    } catch (AwakeableCancelledException e) {
                        return "withdrawn";
                    }
                });
        engine = WorkflowTesting.fastEngine(store, registry).build();
        client = WorkflowClient.create(store);
    }

    @AfterAll
    static void tearDown() {
        engine.close();
        store.close();
    }

    private static Instant wakeAfter(String name, String id) {
        return engine.handle(name, id, String.class).info().wakeAfter();
    }

    @Test
    void a_sleep_suspends_until_its_time_and_rearming_never_postpones_it() throws Exception {
        // an hour: nothing below can race the wake time, however slow the machine
        WorkflowHandle<String> h = engine.start("napper", "n-1", Duration.ofHours(1).toMillis(), String.class);
        await().atMost(WAIT).until(() -> h.status() == WorkflowStatus.SUSPENDED);
        Instant armed = wakeAfter("napper", "n-1");
        assertThat(h.info().waitingOn()).startsWith("sleep 'nap' until");
        // not runnable before its time: nothing claims it
        assertThat(engine.runNow("napper", "n-1")).isFalse();
        // a replay (as after a restart) keeps the first wake time
        WorkflowTesting.execute(POSTGRES, "UPDATE waymark.workflows SET status = 'running' WHERE id = 'n-1'");
        assertThat(engine.runNow("napper", "n-1")).isTrue();
        assertThat(wakeAfter("napper", "n-1")).isEqualTo(armed);
        assertThat(h.status()).isEqualTo(WorkflowStatus.SUSPENDED);
        assertThat(engine.runNow("napper", "n-1")).isFalse();
        // the hour passes: the wake time, in the row and in the journal, moves two hours back
        Instant due = armed.minus(Duration.ofHours(2));
        WorkflowTesting.execute(POSTGRES, "UPDATE waymark.workflows SET wake_after = '" + due + "' WHERE id = 'n-1'");
        WorkflowTesting.execute(POSTGRES, "UPDATE waymark.events SET data = jsonb_set(data, '{result}', to_jsonb('"
                + due + "'::text)) WHERE event_type = 'StepRecorded' AND data ->> 'step' = 'sleepat:nap'"
                + " AND stream_id = (SELECT stream_id FROM waymark.streams WHERE stream_name = '$wf-napper-n-1')");
        try (ResumeWorker worker = engine.resumeWorker(WorkflowTesting.fastResume()).start()) {
            assertThat(h.await(WAIT)).isEqualTo("rested");
        }
        assertThat(effects.count("n-1:before")).isEqualTo(1);
        assertThat(effects.count("n-1:after")).isEqualTo(1);
    }

    @Test
    void a_due_sleep_is_discovered_and_fired_by_the_resume_worker() throws Exception {
        WorkflowHandle<String> h = engine.start("napper", "n-2", 200L, String.class);
        await().atMost(WAIT).until(() -> h.status() == WorkflowStatus.SUSPENDED);
        try (ResumeWorker worker = engine.resumeWorker(WorkflowTesting.fastResume())) {
            await().atMost(WAIT).until(() -> worker.resumeOnce().completed() == 1);
        }
        assertThat(h.await(WAIT)).isEqualTo("rested");
    }

    @Test
    void an_awakeable_completed_by_another_client_wakes_the_workflow_and_the_first_value_wins() throws Exception {
        WorkflowHandle<String> h = engine.start("approval", "a-1", "x", String.class);
        await().atMost(WAIT).until(() -> h.status() == WorkflowStatus.SUSPENDED);
        UUID id = published.get("a-1");
        assertThat(h.info().waitingOn()).contains(id.toString());
        assertThat(client.completeAwakeable(id, "alice")).isEqualTo(AwakeableOutcome.SETTLED);
        assertThat(client.completeAwakeable(id, "bob")).isEqualTo(AwakeableOutcome.ALREADY_COMPLETED);
        assertThat(client.cancelAwakeable(id)).isEqualTo(AwakeableOutcome.ALREADY_COMPLETED);
        // the client does not run workflows: the woken instance is runnable for any engine or worker
        await().atMost(WAIT).until(() -> h.status() == WorkflowStatus.RUNNING);
        assertThat(engine.runNow("approval", "a-1")).isTrue();
        assertThat(h.await(WAIT)).isEqualTo("approved by alice");
    }

    @Test
    void an_awakeable_settled_through_the_engine_runs_the_workflow_at_once() throws Exception {
        WorkflowHandle<String> h = engine.start("approval", "a-2", "x", String.class);
        await().atMost(WAIT).until(() -> h.status() == WorkflowStatus.SUSPENDED);
        assertThat(engine.failAwakeable(published.get("a-2"), "too expensive")).isEqualTo(AwakeableOutcome.SETTLED);
        assertThat(h.await(WAIT)).isEqualTo("rejected: too expensive");
        WorkflowHandle<String> c = engine.start("approval", "a-3", "x", String.class);
        await().atMost(WAIT).until(() -> c.status() == WorkflowStatus.SUSPENDED);
        assertThat(engine.cancelAwakeable(published.get("a-3"))).isEqualTo(AwakeableOutcome.SETTLED);
        assertThat(c.await(WAIT)).isEqualTo("withdrawn");
    }

    @Test
    void a_failure_reason_holding_a_nul_or_a_lone_surrogate_is_refused_and_nothing_is_written() throws Exception {
        WorkflowHandle<String> h = engine.start("approval", "a-bad-reason", "x", String.class);
        await().atMost(WAIT).until(() -> h.status() == WorkflowStatus.SUSPENDED);
        UUID id = published.get("a-bad-reason");
        // before: the NUL surfaced as a StoreException, a lone surrogate as a bare
        // IllegalArgumentException from Jackson's encoder in the size check
        assertThatThrownBy(() -> client.failAwakeable(id, "bad\u0000reason"))
                .isInstanceOf(InvalidWorkflowInputException.class)
                .hasMessage("failure reason of awakeable " + id + " holds a NUL character (\\u0000),"
                        + " which the database cannot store");
        assertThatThrownBy(() -> client.failAwakeable(id, "bad\uD800reason"))
                .isInstanceOf(InvalidWorkflowInputException.class)
                .hasMessage("failure reason of awakeable " + id + " holds a lone UTF-16 surrogate (\\ud800),"
                        + " which has no UTF-8 form");
        assertThatThrownBy(() -> client.failAwakeable(id, "bad reason\uDC00"))
                .isInstanceOf(InvalidWorkflowInputException.class)
                .hasMessageContaining("holds a lone UTF-16 surrogate (\\udc00)");
        assertThat(client.awakeable(id).orElseThrow().status()).isEqualTo("pending");
        assertThat(engine.failAwakeable(id, "too dear \uD83D\uDE00")).isEqualTo(AwakeableOutcome.SETTLED);
        assertThat(h.await(WAIT)).isEqualTo("rejected: too dear \uD83D\uDE00");
    }

    @Test
    void an_unknown_awakeable_is_reported_not_thrown() {
        assertThat(client.completeAwakeable(UUID.randomUUID(), "x")).isEqualTo(AwakeableOutcome.UNKNOWN);
    }

    @Test
    void complete_racing_cancel_is_decided_one_way_never_both() throws Exception {
        int rounds = 20;
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < rounds; i++) {
            String id = "race-" + i;
            ids.add(id);
            engine.start("approval", id, "x", String.class);
        }
        await().atMost(WAIT).until(() -> ids.stream().allMatch(published::containsKey));
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            for (String id : ids) {
                UUID awk = published.get(id);
                CyclicBarrier barrier = new CyclicBarrier(2);
                Future<AwakeableOutcome> complete = pool.submit(() -> {
                    barrier.await();
                    return client.completeAwakeable(awk, "racer");
                });
                Future<AwakeableOutcome> cancel = pool.submit(() -> {
                    barrier.await();
                    return client.cancelAwakeable(awk);
                });
                List<AwakeableOutcome> outcomes = List.of(complete.get(), cancel.get());
                assertThat(outcomes).containsOnlyOnce(AwakeableOutcome.SETTLED);
                await().atMost(WAIT)
                        .until(() -> engine.handle("approval", id, String.class).status() != WorkflowStatus.SUSPENDED);
                engine.runNow("approval", id);
                String result = engine.handle("approval", id, String.class).await(WAIT);
                assertThat(result)
                        .isEqualTo(complete.get() == AwakeableOutcome.SETTLED ? "approved by racer" : "withdrawn");
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(count(POSTGRES, "SELECT count(*) FROM waymark.workflow_awakeables WHERE id LIKE 'race-%'"
                + " AND status IN ('completed', 'cancelled')")).isEqualTo(rounds);
    }

    @Test
    void a_wake_racing_the_suspend_write_is_never_lost() throws Exception {
        // settle the awakeable while the run that awaits it is between its check and its suspend write
        for (int i = 0; i < 20; i++) {
            String id = "wake-" + i;
            AtomicReference<WorkflowHandle<String>> h = new AtomicReference<>(
                    engine.start("approval", id, "x", String.class));
            await().atMost(WAIT).until(() -> published.containsKey(id));
            engine.completeAwakeable(published.get(id), "fast");
            assertThat(h.get().await(WAIT)).isEqualTo("approved by fast");
        }
    }
}
