package dev.waymark.workflow;

import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.store.EventData;
import dev.waymark.store.EventStore;
import dev.waymark.store.ExpectedVersion;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import dev.waymark.workflow.status.WorkflowStatus;
import java.net.SocketTimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What counts as a crash: whatever a body or a step throws, other than the engine's own transient
 * store failures and an interruption by shutdown, is a crash counted against {@code maxAttempts}, so
 * a workflow that keeps failing ends failed instead of being retried forever.
 */
class CrashClassificationTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static final WorkflowTesting.Effects effects = new WorkflowTesting.Effects();

    private static EventStore store;
    private static WorkflowEngine engine;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        WorkflowRegistry registry = new WorkflowRegistry()
                .register("conflicting", String.class, String.class, (ctx, stream) -> {
                    ctx.step("open-ledger", Long.class, () -> {
                        effects.hit(ctx.workflowId() + ":open");
                        return store.append(stream, ExpectedVersion.noStream(), EventData.json("Opened", "{}"))
                                .streamVersion();
                    });
                    return "opened";
                })
                .register("timingOut", String.class, String.class, (ctx, in) -> ctx.step("call", String.class, () -> {
                    effects.hit(ctx.workflowId() + ":call");
                    throw new SocketTimeoutException("read timed out");
                }))
                .register("binary", String.class, String.class, (ctx, in) -> ctx.step("parse", String.class, () -> {
                    effects.hit(ctx.workflowId() + ":parse");
                    throw new IllegalStateException("bad\u0000byte, lone \uD83D");
                }))
                .register("erroring", String.class, String.class, (ctx, in) -> ctx.step("explode", String.class, () -> {
                    effects.hit(ctx.workflowId() + ":explode");
                    throw new InternalError("boom");
                }));
        engine = WorkflowTesting.fastEngine(store, registry).retry(WorkflowTesting.RETRY.withMaxAttempts(1)).build();
    }

    @AfterAll
    static void tearDown() {
        engine.close();
        store.close();
    }

    @Test
    void a_store_conflict_in_a_step_is_a_crash_not_a_transient_failure() {
        store.append("ledger-taken", ExpectedVersion.noStream(), EventData.json("Opened", "{}"));
        WorkflowHandle<String> h = engine.start("conflicting", "c-1", "ledger-taken", String.class);
        await().atMost(WAIT).until(() -> h.status() == WorkflowStatus.FAILED);
        assertThat(h.info().failure()).contains("crashed 1 times").contains("StreamAlreadyExistsException");
        assertThat(effects.count("c-1:open")).isEqualTo(1);
    }

    @Test
    void a_socket_timeout_in_a_step_is_a_crash_not_a_shutdown() {
        WorkflowHandle<String> h = engine.start("timingOut", "t-1", "x", String.class);
        await().atMost(WAIT).until(() -> h.status() == WorkflowStatus.FAILED);
        assertThat(h.info().failure()).contains("SocketTimeoutException").contains("read timed out");
        assertThat(effects.count("t-1:call")).isEqualTo(1);
    }

    @Test
    void an_error_thrown_by_a_step_is_a_crash_and_the_lease_is_released() {
        WorkflowHandle<String> h = engine.start("erroring", "e-1", "x", String.class);
        await().atMost(WAIT).until(() -> h.status() == WorkflowStatus.FAILED);
        assertThat(h.info().failure()).contains("InternalError").contains("boom");
        assertThat(h.info().leaseOwner()).isNull();
        assertThat(effects.count("e-1:explode")).isEqualTo(1);
    }

    @Test
    void a_crash_whose_message_holds_a_nul_is_recorded_and_counted() {
        WorkflowHandle<String> h = engine.start("binary", "b-1", "x", String.class);
        // before: recording the crash failed on the NUL every time, so no attempt was ever counted and
        // the instance was retried for ever
        await().atMost(WAIT).until(() -> h.status() == WorkflowStatus.FAILED);
        assertThat(h.info().failure()).contains("crashed 1 times").contains("bad\uFFFDbyte, lone \uFFFD");
        assertThat(effects.count("b-1:parse")).isEqualTo(1);
    }
}
