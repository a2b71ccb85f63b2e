package dev.waymark.workflow;

import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.waymark.store.EventStore;
import dev.waymark.store.plumbing.StoreInternals;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import dev.waymark.workflow.awakeable.AwakeableInfo;
import dev.waymark.workflow.awakeable.AwakeableOutcome;
import dev.waymark.workflow.exception.InvalidWorkflowInputException;
import dev.waymark.workflow.exception.WorkflowConfigException;
import dev.waymark.workflow.gc.CollectResult;
import dev.waymark.workflow.gc.FinishedWorkflow;
import dev.waymark.workflow.internal.CollectionSql;
import dev.waymark.workflow.internal.SqlOutcomes;
import dev.waymark.workflow.micrometer.CollectorMetrics;
import dev.waymark.workflow.resume.ResumeWorker;
import dev.waymark.workflow.status.CancelOutcome;
import dev.waymark.workflow.status.WorkflowStatus;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Garbage collection of finished workflows (schema version 10). */
class CollectionTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static final Duration HOUR = Duration.ofHours(1);

    private static final WorkflowTesting.Effects effects = new WorkflowTesting.Effects();
    private static final Map<String, Integer> results = new ConcurrentHashMap<>();

    private static EventStore store;
    private static WorkflowEngine engine;
    private static ResumeWorker worker;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        WorkflowRegistry registry = new WorkflowRegistry()
                // two generations, a step in each, an awakeable in the second
                .register("multi", Integer.class, String.class, (ctx, gen) -> {
                    String s = ctx.step("s", String.class, () -> "g" + gen);
                    if (gen == 0) {
                        ctx.continueAsNew(1);
                    }
                    return s + ":" + ctx.awakeable("signal", String.class).await();
                })
                .register("plain", String.class, String.class, (ctx, in) -> ctx.step("echo", String.class, () -> in))
                // a step, a durable sleep (suspended meanwhile), a step; counts each step's executions
                .register("counted", Integer.class, Integer.class, (ctx, n) -> {
                    int a = ctx.step("a", Integer.class, () -> {
                        effects.hit(ctx.workflowId() + ":a");
                        return n;
                    });
                    ctx.sleep("nap", Duration.ofMillis(200));
                    int b = ctx.step("b", Integer.class, () -> {
                        effects.hit(ctx.workflowId() + ":b");
                        return a + 1;
                    });
                    results.put(ctx.workflowId(), b);
                    return b;
                })
                .register("doomed", String.class, String.class, (ctx, in) -> {
                    throw new IllegalStateException("no " + in);
                })
                .register("waiter", String.class, String.class, (ctx, in) -> ctx.awakeable("go", String.class).await())
                // awaits a quick child, then waits for a signal: the child is finished while its parent lives
                .register("parent", String.class, String.class, (ctx, in) -> {
                    String child = ctx.child("kid", "plain", ctx.workflowId() + ".kid", in, String.class).await();
                    return child + ctx.awakeable("go", String.class).await();
                })
                // spawns a child that waits, and ends without awaiting it
                .register("leaver", String.class, String.class, (ctx, in) -> {
                    ctx.child("kid", "waiter", ctx.workflowId() + ".kid", in, String.class);
                    return "left";
                })
                // "leave": as leaver; anything else: waits for a signal, with no child
                .register("host", String.class, String.class, (ctx, in) -> {
                    if (in.equals("leave")) {
                        ctx.child("kid", "waiter", ctx.workflowId() + ".kid", in, String.class);
                        return "left";
                    }
                    return ctx.awakeable("hold", String.class).await();
                });
        engine = WorkflowTesting.fastEngine(store, registry).retry(WorkflowTesting.RETRY.withMaxAttempts(1)).build();
        worker = engine.resumeWorker(
                WorkflowTesting.fastResume().toBuilder().retry(WorkflowTesting.RETRY.withMaxAttempts(1)).build())
                .start();
    }

    @AfterAll
    static void tearDown() {
        worker.close();
        engine.close();
        store.close();
    }

    @Test
    void deletes_every_generation_awakeables_and_row_after_retention_and_nothing_within_it() throws Exception {
        WorkflowHandle<String> old = engine.start("multi", "old", 0, String.class);
        settle("multi", "old", "signal", "done");
        assertThat(old.await(WAIT)).isEqualTo("g1:done");
        assertThat(engine.start("multi", "young", 0, String.class).status()).isNotNull();
        settle("multi", "young", "signal", "done");
        assertThat(engine.handle("multi", "young", String.class).await(WAIT)).isEqualTo("g1:done");
        finishedAgo("multi", "old", Duration.ofHours(2));
        String oldStreams = "(SELECT stream_id FROM " + q() + ".streams WHERE stream_name IN ('$wf-multi-old',"
                + " '$wf-multi-old#1'))";
        assertThat(count("SELECT count(*) FROM " + q() + ".events WHERE stream_id IN " + oldStreams)).isPositive();
        long oldStreamIds = count("SELECT count(*) FROM " + oldStreams + " s");
        assertThat(oldStreamIds).isEqualTo(2);
        long youngEvents = count("SELECT count(*) FROM " + q() + ".events e JOIN " + q()
                + ".streams s USING (stream_id) WHERE s.stream_name LIKE '$wf-multi-young%'");

        assertThat(engine.collectable(HOUR, 100)).extracting(FinishedWorkflow::id).containsExactly("old");
        assertThat(engine.collect(HOUR, 100)).isEqualTo(new CollectResult(1, 1, 0));

        assertThat(engine.describe("multi", "old")).isEmpty();
        assertThat(count("SELECT count(*) FROM " + oldStreams + " s")).isZero();
        assertThat(count("SELECT count(*) FROM " + q() + ".events e WHERE NOT EXISTS (SELECT 1 FROM " + q()
                + ".streams s WHERE s.stream_id = e.stream_id)")).as("events of deleted streams").isZero();
        assertThat(count("SELECT count(*) FROM " + q() + ".workflow_awakeables WHERE id = 'old'")).isZero();
        // within retention: untouched
        assertThat(engine.describe("multi", "young")).isPresent();
        assertThat(count("SELECT count(*) FROM " + q() + ".events e JOIN " + q()
                + ".streams s USING (stream_id) WHERE s.stream_name LIKE '$wf-multi-young%'")).isEqualTo(youngEvents);
        assertThat(count("SELECT count(*) FROM " + q() + ".workflow_awakeables WHERE id = 'young'")).isEqualTo(1);
        assertThat(engine.collect(HOUR, 100)).isEqualTo(new CollectResult(0, 0, 0));
    }

    @Test
    void failed_and_cancelled_instances_are_collected_and_live_ones_never() throws Exception {
        WorkflowHandle<String> doomed = engine.start("doomed", "d1", "water", String.class);
        await().atMost(WAIT).until(() -> doomed.status() == WorkflowStatus.FAILED);
        WorkflowHandle<String> cancelled = engine.start("waiter", "c1", "x", String.class);
        await().atMost(WAIT).until(() -> cancelled.status() == WorkflowStatus.SUSPENDED);
        assertThat(cancelled.cancel()).isEqualTo(CancelOutcome.CANCELLED);
        WorkflowHandle<String> live = engine.start("waiter", "live1", "x", String.class);
        await().atMost(WAIT).until(() -> live.status() == WorkflowStatus.SUSPENDED);
        finishedAgo("waiter", "live1", Duration.ofDays(30)); // a stray timestamp does not make it finished

        assertThat(engine.collectable(Duration.ZERO, 100)).extracting(FinishedWorkflow::id).contains("d1", "c1")
                .doesNotContain("live1");
        assertThat(new CollectionSql(StoreInternals.of(store).dataSource(), store.schema()).collect("waiter", "live1",
                Duration.ZERO))
                .isEqualTo(SqlOutcomes.Collect.KEPT);
        engine.collect(Duration.ZERO, 100);
        assertThat(engine.describe("doomed", "d1")).isEmpty();
        assertThat(engine.describe("waiter", "c1")).isEmpty();
        assertThat(live.status()).isEqualTo(WorkflowStatus.SUSPENDED);
    }

    @Test
    void a_finished_child_is_kept_while_its_parent_lives_and_goes_with_it() throws Exception {
        WorkflowHandle<String> parent = engine.start("parent", "p", "k", String.class);
        await().atMost(WAIT).until(() -> parent.status() == WorkflowStatus.SUSPENDED
                && engine.handle("plain", "p.kid", String.class).status() == WorkflowStatus.COMPLETED);
        finishedAgo("plain", "p.kid", Duration.ofDays(1));
        assertThat(engine.collectable(Duration.ZERO, 100)).extracting(FinishedWorkflow::id).doesNotContain("p.kid");
        assertThat(new CollectionSql(StoreInternals.of(store).dataSource(), store.schema()).collect("plain", "p.kid",
                Duration.ZERO))
                .isEqualTo(SqlOutcomes.Collect.KEPT);
        assertThat(engine.describe("plain", "p.kid")).isPresent();

        settle("parent", "p", "go", "!");
        assertThat(parent.await(WAIT)).isEqualTo("k!");
        engine.collect(Duration.ZERO, 100);
        assertThat(engine.describe("parent", "p")).isEmpty();
        assertThat(engine.describe("plain", "p.kid")).isEmpty();
    }

    @Test
    void a_collected_parents_unfinished_child_is_detached_and_runs_to_its_end() throws Exception {
        WorkflowHandle<String> leaver = engine.start("leaver", "l", "x", String.class);
        assertThat(leaver.await(WAIT)).isEqualTo("left");
        await().atMost(WAIT)
                .until(() -> engine.handle("waiter", "l.kid", String.class).status() == WorkflowStatus.SUSPENDED);
        engine.collect(Duration.ZERO, 100);
        assertThat(engine.describe("leaver", "l")).isEmpty();

        settle("waiter", "l.kid", "go", "still here");
        assertThat(engine.handle("waiter", "l.kid", String.class).await(WAIT)).isEqualTo("still here");
        engine.collect(Duration.ZERO, 100);
        assertThat(engine.describe("waiter", "l.kid")).isEmpty();
    }

    @Test
    void a_new_instance_under_a_collected_parents_id_does_not_inherit_its_children() throws Exception {
        assertThat(engine.start("host", "h1", "leave", String.class).await(WAIT)).isEqualTo("left");
        WorkflowHandle<String> kid = engine.handle("waiter", "h1.kid", String.class);
        await().atMost(WAIT).until(() -> kid.status() == WorkflowStatus.SUSPENDED);
        assertThat(new CollectionSql(StoreInternals.of(store).dataSource(), store.schema()).collect("host", "h1",
                Duration.ZERO))
                .isEqualTo(SqlOutcomes.Collect.DELETED);

        WorkflowHandle<String> again = engine.start("host", "h1", "stay", String.class);
        await().atMost(WAIT).until(() -> again.status() == WorkflowStatus.SUSPENDED);
        assertThat(again.cancel()).isEqualTo(CancelOutcome.CANCELLED);
        // before: the collected parent's child still named it, so the new instance's cancellation
        // cascaded into a workflow it never spawned
        assertThat(kid.status()).isEqualTo(WorkflowStatus.SUSPENDED);
        assertThat(engine.describe("host", "h1").orElseThrow().children()).isEmpty();
        assertThat(kid.info().parentName()).isNull();
        assertThat(kid.info().parentId()).isNull();
    }

    @Test
    void a_parent_whose_child_row_is_locked_elsewhere_is_skipped_without_waiting() throws Exception {
        assertThat(engine.start("host", "h2", "leave", String.class).await(WAIT)).isEqualTo("left");
        WorkflowHandle<String> kid = engine.handle("waiter", "h2.kid", String.class);
        await().atMost(WAIT).until(() -> kid.status() == WorkflowStatus.SUSPENDED);
        CollectionSql collection = new CollectionSql(StoreInternals.of(store).dataSource(), store.schema());
        try (Connection c = POSTGRES.dataSource().getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement lock = c.prepareStatement("SELECT 1 FROM " + q()
                    + ".workflows WHERE name = 'waiter' AND id = 'h2.kid' FOR UPDATE")) {
                lock.execute(); // as a child's end holds its row before it takes its parent's lock
            }
            try {
                // waiting for the row here could deadlock against that child's end
                assertThat(CompletableFuture.supplyAsync(() -> collection.collect("host", "h2", Duration.ZERO))
                        .get(10, TimeUnit.SECONDS)).isEqualTo(SqlOutcomes.Collect.BUSY);
            } finally {
                c.commit();
            }
        }
        assertThat(engine.describe("host", "h2")).isPresent();
        assertThat(collection.collect("host", "h2", Duration.ZERO)).isEqualTo(SqlOutcomes.Collect.DELETED);
        assertThat(kid.info().parentId()).isNull();
        assertThat(kid.status()).isEqualTo(WorkflowStatus.SUSPENDED);
    }

    @Test
    void an_instance_whose_lock_is_held_is_skipped_and_collected_by_a_later_pass() throws Exception {
        assertThat(engine.start("plain", "busy", "b", String.class).await(WAIT)).isEqualTo("b");
        try (Connection c = POSTGRES.dataSource().getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement lock = c.prepareStatement(
                    "SELECT pg_advisory_xact_lock(hashtextextended(? || '#wf#plain#busy', 0))")) {
                lock.setString(1, store.schema());
                lock.execute();
            }
            CollectResult held = engine.collect(Duration.ZERO, 100);
            assertThat(held.skipped()).isGreaterThanOrEqualTo(1);
            assertThat(engine.describe("plain", "busy")).isPresent();
            c.commit();
        }
        engine.collect(Duration.ZERO, 100);
        assertThat(engine.describe("plain", "busy")).isEmpty();
    }

    @Test
    void a_retry_that_commits_while_collection_waits_for_the_row_keeps_the_instance() throws Exception {
        WorkflowHandle<String> doomed = engine.start("doomed", "d2", "air", String.class);
        await().atMost(WAIT).until(() -> doomed.status() == WorkflowStatus.FAILED);
        CollectionSql collection = new CollectionSql(StoreInternals.of(store).dataSource(), store.schema());
        try (Connection c = POSTGRES.dataSource().getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement retry = c.prepareStatement("UPDATE " + q() + ".workflows SET status = 'running',"
                    + " attempts = 0, failure = NULL, completed_at = NULL WHERE name = 'doomed' AND id = 'd2'")) {
                assertThat(retry.executeUpdate()).isEqualTo(1); // what WorkflowClient.retry does, not yet committed
            }
            CompletableFuture<SqlOutcomes.Collect> collecting = CompletableFuture.supplyAsync(
                    () -> collection.collect("doomed", "d2", Duration.ZERO));
            await().atMost(WAIT).until(() -> count("SELECT count(*) FROM pg_stat_activity"
                    + " WHERE datname = current_database() AND wait_event_type = 'Lock'") > 0);
            c.commit();
            assertThat(collecting.get(30, TimeUnit.SECONDS)).isEqualTo(SqlOutcomes.Collect.KEPT);
        }
        assertThat(engine.describe("doomed", "d2")).isPresent();
    }

    @Test
    void a_collected_id_starts_again_as_a_new_instance() throws Exception {
        assertThat(engine.start("plain", "again", "first", String.class).await(WAIT)).isEqualTo("first");
        engine.collect(Duration.ZERO, 100);
        assertThat(engine.describe("plain", "again")).isEmpty();
        // a different input would be a start conflict had the instance survived
        assertThat(engine.start("plain", "again", "second", String.class).await(WAIT)).isEqualTo("second");
    }

    @Test
    void a_handle_gets_the_new_instance_when_another_process_collected_and_started_the_id_again() throws Exception {
        assertThat(engine.start("plain", "elsewhere", "first", String.class).await(WAIT)).isEqualTo("first");
        // another process (its own engine: nothing shared in memory) collects the id and starts it anew
        try (WorkflowEngine other = WorkflowTesting.fastEngine(store, new WorkflowRegistry()
                .register("plain", String.class, String.class, (ctx, in) -> ctx.step("echo", String.class, () -> in)))
                .build()) {
            other.collect(Duration.ZERO, 100);
            assertThat(other.start("plain", "elsewhere", "second", String.class).await(WAIT)).isEqualTo("second");
        }
        // this engine ran the first instance: it must not answer with that one's result
        assertThat(engine.handle("plain", "elsewhere", String.class).await(WAIT)).isEqualTo("second");
    }

    @Test
    void the_collector_deletes_in_the_background_and_reports_its_passes() throws Exception {
        assertThat(engine.start("plain", "bg", "x", String.class).await(WAIT)).isEqualTo("x");
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (WorkflowCollector collector = WorkflowCollector.start(engine.client(), Duration.ZERO,
                Duration.ofMillis(50), 1,
                new CollectorMetrics(registry))) {
            await().atMost(WAIT).until(() -> engine.describe("plain", "bg").isEmpty());
            await().atMost(WAIT).until(() -> collector.lastPass().isPresent());
            assertThat(collector.failedPasses()).isZero();
            await().atMost(WAIT).until(() -> registry.get("waymark.workflow.collect.deleted").counter().count() >= 1);
            assertThat(registry.get("waymark.workflow.collect.pass").timer().count()).isPositive();
        }
    }

    @Test
    void collecting_continuously_beside_busy_workflows_never_touches_a_live_one() throws Exception {
        int count = 60;
        try (WorkflowCollector collector = WorkflowCollector.start(engine.client(), Duration.ZERO,
                Duration.ofMillis(10), 5)) {
            for (int i = 0; i < count; i++) {
                engine.start("counted", "busy-" + i, i, Integer.class);
            }
            await().atMost(WAIT)
                    .until(() -> results.keySet().stream().filter(k -> k.startsWith("busy-")).count() == count);
            await().atMost(WAIT).until(() -> engine.collectable(Duration.ZERO, 100).stream()
                    .noneMatch(f -> f.id().startsWith("busy-")) && collector.failedPasses() == 0);
        }
        for (int i = 0; i < count; i++) {
            assertThat(results.get("busy-" + i)).as("result of busy-" + i).isEqualTo(i + 1);
            // a live instance's journal deleted under it would have run its first step again on replay
            assertThat(effects.count("busy-" + i + ":a")).as("step a of busy-" + i).isEqualTo(1);
            assertThat(effects.count("busy-" + i + ":b")).as("step b of busy-" + i).isEqualTo(1);
            assertThat(engine.describe("counted", "busy-" + i)).as("busy-" + i + " collected once finished").isEmpty();
        }
    }

    @Test
    void bad_arguments_are_clear_errors() {
        assertThatThrownBy(() -> engine.collect(Duration.ofSeconds(-1), 10))
                .isInstanceOf(InvalidWorkflowInputException.class).hasMessageContaining("retention");
        assertThatThrownBy(() -> engine.collectable(Duration.ZERO, 0))
                .isInstanceOf(InvalidWorkflowInputException.class).hasMessageContaining("limit");
        assertThatThrownBy(() -> WorkflowCollector.start(engine.client(), Duration.ZERO, Duration.ZERO, 10))
                .isInstanceOf(WorkflowConfigException.class).hasMessageContaining("interval");
        assertThatThrownBy(() -> WorkflowCollector.start(engine.client(), Duration.ZERO, Duration.ofSeconds(1), 0))
                .isInstanceOf(InvalidWorkflowInputException.class).hasMessageContaining("batchSize");
        assertThatThrownBy(
                () -> WorkflowCollector.start(engine.client(), Duration.ZERO, Duration.ofSeconds(1), 1, null))
                .isInstanceOf(InvalidWorkflowInputException.class).hasMessage("listener must not be null");
    }

    /** Waits for the pending awakeable {@code label} of the instance, then completes it with {@code value}. */
    private static void settle(String name, String id, String label, String value) {
        UUID awakeable = await().atMost(WAIT).until(() -> engine.describe(name, id).flatMap(d -> d.awakeables()
                .stream().filter(a -> a.label().equals(label) && a.status().equals("pending")).findFirst())
                .map(AwakeableInfo::id).orElse(null), a -> a != null);
        assertThat(engine.completeAwakeable(awakeable, value)).isEqualTo(AwakeableOutcome.SETTLED);
    }

    private static void finishedAgo(String name, String id, Duration ago) {
        POSTGRES.execute("UPDATE " + q() + ".workflows SET completed_at = now() - interval '" + ago.toSeconds()
                + " seconds' WHERE name = '" + name + "' AND id = '" + id + "'");
    }

    private static long count(String sql) {
        return WorkflowTesting.count(POSTGRES, sql);
    }

    private static String q() {
        return "\"" + store.schema() + "\"";
    }
}
