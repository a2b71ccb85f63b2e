package dev.waymark.workflow;

import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.store.EventStore;
import dev.waymark.store.plumbing.StoreInternals;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import dev.waymark.workflow.gc.FinishedWorkflow;
import dev.waymark.workflow.internal.CollectionSql;
import dev.waymark.workflow.internal.Instances;
import dev.waymark.workflow.internal.SqlOutcomes;
import dev.waymark.workflow.micrometer.WorkflowMetrics;
import dev.waymark.workflow.resume.ResumeEvent;
import dev.waymark.workflow.resume.ResumeListener;
import dev.waymark.workflow.resume.ResumeWorker;
import dev.waymark.workflow.status.WorkflowStatus;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A cancellation cascade that the cancelling process did not finish (it died after committing the
 * parent's cancellation) is finished by a resume worker: the whole chain under the cancelled parent
 * ends cancelled.
 */
class CascadeRepairTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static EventStore store;
    private static WorkflowEngine engine;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        WorkflowRegistry registry = new WorkflowRegistry()
                .register("top", String.class, String.class,
                        (ctx, in) -> ctx.child("c", "middle", ctx.workflowId() + ".m", in, String.class).await())
                .register("middle", String.class, String.class,
                        (ctx, in) -> ctx.child("c", "leaf", ctx.workflowId() + ".l", in, String.class).await())
                .register("leaf", String.class, String.class,
                        (ctx, in) -> ctx.awakeable("never", String.class).await());
        engine = WorkflowTesting.fastEngine(store, registry).build();
    }

    @AfterAll
    static void tearDown() {
        engine.close();
        store.close();
    }

    @Test
    void a_resume_worker_cancels_the_chain_under_a_parent_whose_cascade_was_cut_short() {
        engine.start("top", "t", "x", String.class);
        await().atMost(WAIT).until(() -> status("leaf", "t.m.l") == WorkflowStatus.SUSPENDED
                && status("middle", "t.m") == WorkflowStatus.SUSPENDED
                && status("top", "t") == WorkflowStatus.SUSPENDED);
        // what `cancel` commits before it cascades: the process dies right after it
        Instances instances = new Instances(POSTGRES.dataSource(), store.schema());
        assertThat(instances.appendTerminal("top", "t", "WorkflowCancelled", "{}", null, WorkflowStatus.CANCELLED, null)
                .kind()).isEqualTo(SqlOutcomes.Append.APPENDED);
        assertThat(status("middle", "t.m")).isEqualTo(WorkflowStatus.SUSPENDED); // nobody cascades now
        // a cancelled parent with live children is not collected: that would hide them from the repair
        assertThat(engine.collectable(Duration.ZERO, 100)).extracting(FinishedWorkflow::id).doesNotContain("t");
        assertThat(new CollectionSql(StoreInternals.of(store).dataSource(), store.schema()).collect("top", "t",
                Duration.ZERO))
                .isEqualTo(SqlOutcomes.Collect.KEPT);
        engine.collect(Duration.ZERO, 100);
        assertThat(status("top", "t")).isEqualTo(WorkflowStatus.CANCELLED);

        List<ResumeEvent> events = new CopyOnWriteArrayList<>();
        ResumeListener hearing = hearing(events);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ResumeListener metered = new WorkflowMetrics(registry, hearing);
        try (ResumeWorker worker = engine
                .resumeWorker(WorkflowTesting.fastResume().toBuilder().listener(metered).build()).start()) {
            // before: the middle and the leaf stayed suspended under their cancelled parent for ever
            await().atMost(WAIT).until(() -> status("leaf", "t.m.l") == WorkflowStatus.CANCELLED);
            assertThat(status("middle", "t.m")).isEqualTo(WorkflowStatus.CANCELLED);
            await().atMost(WAIT)
                    .until(() -> events.contains(new ResumeEvent.CascadeRepaired("middle", "t.m", "top", "t")));
            assertThat(events)
                    .noneMatch(e -> e instanceof ResumeEvent.TransientError || e instanceof ResumeEvent.PassFailed);
            // the middle only: the leaf was cancelled by the middle's own cascade
            assertThat(registry.get("waymark.workflow.resume.cascades_repaired").counter().count()).isEqualTo(1);
        }
        engine.collect(Duration.ZERO, 100); // the whole chain has ended now
        assertThat(status("top", "t")).isNull();
        assertThat(status("leaf", "t.m.l")).isNull();
    }

    @Test
    void a_running_worker_repairs_a_cascade_cut_short_after_its_first_pass_within_its_repair_interval() {
        List<ResumeEvent> events = new CopyOnWriteArrayList<>();
        ResumeListener hearing = hearing(events);
        // a poll interval of 1 s: under the old rule (every 60 poll intervals) the next look was a minute away
        try (ResumeWorker worker = engine
                .resumeWorker(WorkflowTesting.fastResume().toBuilder().pollInterval(Duration.ofSeconds(1))
                        .cascadeRepairInterval(Duration.ofMillis(200)).listener(hearing).build())
                .start()) {
            engine.start("top", "r", "x", String.class);
            await().atMost(WAIT).until(() -> status("leaf", "r.m.l") == WorkflowStatus.SUSPENDED
                    && status("middle", "r.m") == WorkflowStatus.SUSPENDED
                    && status("top", "r") == WorkflowStatus.SUSPENDED);
            Instances instances = new Instances(POSTGRES.dataSource(), store.schema());
            assertThat(instances
                    .appendTerminal("top", "r", "WorkflowCancelled", "{}", null, WorkflowStatus.CANCELLED, null)
                    .kind()).isEqualTo(SqlOutcomes.Append.APPENDED);
            await().atMost(Duration.ofSeconds(10)).until(() -> status("leaf", "r.m.l") == WorkflowStatus.CANCELLED
                    && status("middle", "r.m") == WorkflowStatus.CANCELLED);
            assertThat(events).contains(new ResumeEvent.CascadeRepaired("middle", "r.m", "top", "r"));
        }
    }

    /** A listener that adds every event to {@code events}. */
    private static ResumeListener hearing(List<ResumeEvent> events) {
        return new ResumeListener() {
            @Override
            public void onEvent(ResumeEvent event) {
                events.add(event);
            }
        };
    }

    private static WorkflowStatus status(String name, String id) {
        return engine.describe(name, id).map(d -> d.info().status()).orElse(null);
    }
}
