package dev.waymark.workflow;

import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

import dev.waymark.store.EventStore;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import dev.waymark.workflow.resume.ResumeWorker;
import dev.waymark.workflow.status.JournalEntry;
import java.io.IOException;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code ctx.run(name, action)}: a step with no result, without {@code Void} or {@code return null}. */
class VoidStepTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static final WorkflowTesting.Effects effects = new WorkflowTesting.Effects();

    private static EventStore store;
    private static WorkflowEngine engine;
    private static ResumeWorker worker;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        WorkflowRegistry registry = new WorkflowRegistry()
                .register("notify", String.class, String.class, (ctx, in) -> {
                    ctx.run("send", () -> effects.hit(ctx.workflowId() + ":send"));
                    if (effects.hit(ctx.workflowId() + ":attempt") == 1) {
                        throw new IllegalStateException("crash after the void step");
                    }
                    return "sent " + effects.count(ctx.workflowId() + ":send");
                })
                .register("checkedVoid", String.class, String.class, (ctx, in) -> {
                    try {
                        ctx.run("io", () -> {
                            throw new IOException("disk full");
                        });
                        return "no exception";
                    } catch (IOException e) {
                        return "caught " + e.getMessage();
                    }
                });
        engine = WorkflowTesting.fastEngine(store, registry).retry(WorkflowTesting.RETRY.withMaxAttempts(3)).build();
        worker = engine.resumeWorker(
                WorkflowTesting.fastResume().toBuilder().retry(WorkflowTesting.RETRY.withMaxAttempts(3)).build())
                .start();
    }

    @AfterAll
    static void tearDown() {
        worker.close();
        engine.close();
        store.close();
    }

    @Test
    void a_void_step_runs_once_is_journaled_and_is_skipped_on_replay() throws Exception {
        WorkflowHandle<String> h = engine.start("notify", "n-1", "x", String.class);
        assertThat(h.await(WAIT)).isEqualTo("sent 1");
        assertThat(effects.count("n-1:attempt")).as("the body ran twice (a crash, then the replay)").isEqualTo(2);
        assertThat(effects.count("n-1:send")).as("the void step ran once").isEqualTo(1);
        assertThat(engine.describe("notify", "n-1").orElseThrow().journal())
                .filteredOn(e -> "send".equals(e.step())).singleElement()
                .satisfies(e -> assertThat(e.type()).isEqualTo("StepRecorded"));
    }

    @Test
    void a_checked_exception_of_a_void_step_reaches_the_body_and_nothing_is_journaled() throws Exception {
        assertThat(engine.start("checkedVoid", "c-1", "x", String.class).await(WAIT)).isEqualTo("caught disk full");
        assertThat(engine.describe("checkedVoid", "c-1").orElseThrow().journal())
                .extracting(JournalEntry::step).doesNotContain("io");
    }
}
