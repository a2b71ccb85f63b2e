package dev.waymark.workflow.resume;

import static org.assertj.core.api.Assertions.assertThat;

import dev.waymark.store.EventStore;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import dev.waymark.workflow.WorkflowEngine;
import dev.waymark.workflow.WorkflowRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A started loop passes when a sleep comes due, without a poll or a wake of the store to prompt it:
 * with push off and an hour between polls, a 200 ms sleep still resumes after about 200 ms, whether
 * the worker learnt of it from a run of its own process (the due hint) or from its last claim
 * statement (the next wake time it returns).
 */
class DueWakeTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static final WorkflowRegistry REGISTRY = new WorkflowRegistry()
            .register("napper", Long.class, String.class, (ctx, millis) -> {
                ctx.step("before", Integer.class, () -> 1);
                ctx.sleep("nap", Duration.ofMillis(millis));
                return ctx.step("after", String.class, () -> "rested");
            });

    @Test
    void a_sleep_of_a_local_run_resumes_at_its_wake_time_without_a_poll() throws Exception {
        try (EventStore store = EventStore.builder(POSTGRES.dataSource()).build()) {
            store.migrate();
            // no held wait: the run parks on the sleep, as every run of a resume worker does
            try (WorkflowEngine engine = WorkflowEngine.builder(store, REGISTRY).holdWaits(Duration.ZERO).build();
                    ResumeWorker worker = engine.resumeWorker(ResumeOptions.builder().push(false)
                            .pollInterval(Duration.ofHours(1)).build()).start()) {
                long t0 = System.nanoTime();
                // the engine runs it here at once; it parks on the sleep and tells the worker its wake time
                String result = engine.start("napper", "local", 200L, String.class).await(Duration.ofSeconds(20));
                long ms = (System.nanoTime() - t0) / 1_000_000;
                assertThat(result).isEqualTo("rested");
                assertThat(ms).as("start to finish, ms").isBetween(200L, 10_000L);
                assertThat(worker.options().pollInterval()).isEqualTo(Duration.ofHours(1));
            }
        }
    }

    @Test
    void a_sleep_found_by_the_claim_statement_resumes_at_its_wake_time_without_a_poll() throws Exception {
        try (EventStore store = EventStore.builder(POSTGRES.dataSource()).build()) {
            store.migrate();
            // another process's run parked on a 2 s sleep before this worker started: the worker's first
            // claim returns the wake time, and the worker passes then, not an hour later
            try (WorkflowEngine elsewhere = WorkflowEngine.builder(store, REGISTRY).holdWaits(Duration.ZERO).build()) {
                elsewhere.start("napper", "remote", 2000L, String.class);
                org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(20))
                        .until(() -> elsewhere.handle("napper", "remote", String.class).info()
                                .status() == dev.waymark.workflow.status.WorkflowStatus.SUSPENDED);
            }
            try (WorkflowEngine engine = WorkflowEngine.builder(store, REGISTRY).runOnStart(false).build();
                    ResumeWorker worker = engine.resumeWorker(ResumeOptions.builder().push(false)
                            .pollInterval(Duration.ofHours(1)).build()).start()) {
                assertThat(engine.handle("napper", "remote", String.class).await(Duration.ofSeconds(20)))
                        .isEqualTo("rested");
            }
        }
    }
}
