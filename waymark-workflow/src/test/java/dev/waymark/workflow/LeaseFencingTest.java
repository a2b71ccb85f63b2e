package dev.waymark.workflow;

import static dev.waymark.testkit.Waits.WAIT;
import static dev.waymark.workflow.WorkflowTesting.execute;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.store.EventStore;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import dev.waymark.workflow.exception.WorkflowLeaseLostException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A run whose lease was taken over cannot journal anything (DESIGN.md decision 3). */
class LeaseFencingTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static final WorkflowTesting.Effects effects = new WorkflowTesting.Effects();
    private static final CountDownLatch inStep = new CountDownLatch(1);
    private static final CountDownLatch proceed = new CountDownLatch(1);

    private static final java.util.Queue<Throwable> runErrors = new java.util.concurrent.ConcurrentLinkedQueue<>();
    private static EventStore store;
    private static WorkflowEngine engine;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        WorkflowRegistry registry = new WorkflowRegistry().register("zombie", String.class, String.class, (ctx, in) -> {
            String a = ctx.step("a", String.class, () -> {
                int n = effects.hit("a");
                if (n == 1) {
                    inStep.countDown();
                    proceed.await(30, TimeUnit.SECONDS); // the first run stalls here, like a paused process
                }
                return "a" + n;
            });
            return a + ctx.step("b", String.class, () -> "b" + effects.hit("b"));
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
    void a_run_that_lost_its_lease_journals_nothing_and_the_new_owner_finishes() throws Exception {
        WorkflowHandle<String> h = engine.start("zombie", "z-1", "x", String.class);
        assertThat(inStep.await(20, TimeUnit.SECONDS)).isTrue();
        long epoch = h.info().leaseEpoch();
        // another worker takes the instance over (as after the stalled owner's lease expired)
        execute(POSTGRES, "UPDATE waymark.workflows SET lease_owner = 'other-worker', lease_epoch = lease_epoch + 1,"
                + " lease_expires_at = now() + interval '1 hour' WHERE id = 'z-1'");
        proceed.countDown();
        // the stalled run finishes its action, but its journal write is refused: it stops with a lost lease
        await().atMost(WAIT).until(() -> !runErrors.isEmpty());
        assertThat(runErrors.peek()).isInstanceOf(WorkflowLeaseLostException.class)
                .hasMessageContaining("lease epoch " + epoch + " was taken over");
        assertThat(engine.describe("zombie", "z-1").orElseThrow().journal()).noneMatch(e -> "a".equals(e.step()));
        assertThat(effects.count("a")).isEqualTo(1);
        assertThat(effects.count("b")).isZero();
        assertThat(h.info().leaseOwner()).isEqualTo("other-worker");
        // the new owner's lease ends (released here by hand); any worker now finishes the workflow
        execute(POSTGRES, "UPDATE waymark.workflows SET lease_owner = NULL, lease_expires_at = NULL WHERE id = 'z-1'");
        assertThat(engine.runNow("zombie", "z-1")).isTrue();
        assertThat(h.await(WAIT)).isEqualTo("a2b1");
        assertThat(engine.describe("zombie", "z-1").orElseThrow().journal())
                .filteredOn(e -> "a".equals(e.step())).singleElement();
    }
}
