package dev.waymark.workflow;

import static dev.waymark.testkit.Waits.WAIT;
import static dev.waymark.workflow.WorkflowTesting.execute;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.store.EventStore;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import dev.waymark.workflow.exception.WorkflowLeaseLostException;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A lease lost to another worker is expected (a pause, a slow step): one WARN line with the state, no stack trace. */
class LeaseLossLoggingTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static final CountDownLatch inStep = new CountDownLatch(1);
    private static final CountDownLatch proceed = new CountDownLatch(1);
    private static final java.util.Queue<Throwable> runErrors = new java.util.concurrent.ConcurrentLinkedQueue<>();

    private static EventStore store;
    private static WorkflowEngine engine;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        WorkflowRegistry registry = new WorkflowRegistry().register("stalled", String.class, String.class,
                (ctx, in) -> ctx.step("a", String.class, () -> {
                    inStep.countDown();
                    proceed.await(30, TimeUnit.SECONDS); // a paused process, as far as its lease is concerned
                    return "a";
                }));
        engine = WorkflowTesting.fastEngine(store, registry).owner("paused-engine")
                .listener(WorkflowTesting.collectingErrors(runErrors)).build();
    }

    @AfterAll
    static void tearDown() {
        engine.close();
        store.close();
    }

    @Test
    void a_lost_lease_is_one_warn_line_naming_the_workflow_the_owners_and_the_epochs() throws Exception {
        WorkflowHandle<String> h = engine.start("stalled", "s-1", "x", String.class);
        assertThat(inStep.await(20, TimeUnit.SECONDS)).isTrue();
        long epoch = h.info().leaseEpoch();
        execute(POSTGRES, "UPDATE waymark.workflows SET lease_owner = 'other-worker', lease_epoch = lease_epoch + 1,"
                + " lease_expires_at = now() + interval '1 hour' WHERE id = 's-1'");
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        PrintStream original = System.err; // slf4j-simple writes to the System.err of the moment
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            proceed.countDown();
            await().atMost(WAIT).until(() -> !runErrors.isEmpty()
                    && captured.toString(StandardCharsets.UTF_8).contains("stalled/s-1"));
        } finally {
            System.setErr(original);
        }
        assertThat(runErrors.peek()).isInstanceOf(WorkflowLeaseLostException.class);
        List<String> lines = captured.toString(StandardCharsets.UTF_8).lines().toList();
        // before: nothing at all was logged
        assertThat(lines).filteredOn(l -> l.contains("stalled/s-1")).singleElement().satisfies(line -> assertThat(line)
                .contains("WARN")
                .contains("lost its lease")
                .contains("owner paused-engine at epoch " + epoch)
                .contains("other-worker holds it at epoch " + (epoch + 1)));
        assertThat(lines).as("no stack trace").noneMatch(l -> l.startsWith("\tat ") || l.contains("Exception"));
    }
}
