package dev.waymark.workflow;

import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.store.EventStore;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.workflow.resume.ResumeOptions;
import dev.waymark.workflow.resume.ResumeWorker;
import dev.waymark.workflow.status.WorkflowStatus;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The test clock skips a workflow's sleep: three days pass in well under a second. */
class TestClockTest {

    @RegisterExtension
    static final WaymarkExtension WAYMARK = new WaymarkExtension();

    private static final Logger log = LoggerFactory.getLogger(TestClockTest.class);
    private static final AtomicInteger charged = new AtomicInteger();

    @Test
    void a_workflow_sleeping_three_days_ends_in_well_under_a_second_once_the_clock_skips_them() throws Exception {
        WorkflowRegistry registry = new WorkflowRegistry().register("fulfil", String.class, String.class,
                (ctx, item) -> {
                    ctx.step("charge", Integer.class, charged::incrementAndGet);
                    ctx.sleep("cooling-off", Duration.ofDays(3));
                    return ctx.step("ship", String.class, () -> "shipped " + item);
                });
        // Polls a minute apart: only the clock's wake can resume the run within the second asserted.
        EventStore store = WAYMARK.newStore(WAYMARK.storeBuilder().fallbackPoll(Duration.ofMinutes(1)));
        try (WorkflowEngine engine = WorkflowEngine.builder(store, registry).build();
                ResumeWorker worker = engine
                        .resumeWorker(ResumeOptions.builder().pollInterval(Duration.ofMinutes(1)).build())
                        .start()) {
            // Warm-up: the same path once (first claims, first replay), so that what is measured
            // below is the skip itself, not class loading and JIT on a loaded machine.
            WorkflowHandle<String> first = engine.start("fulfil", "order-0", "pen", String.class);
            await().atMost(WAIT).until(() -> first.status() == WorkflowStatus.SUSPENDED);
            WAYMARK.clock().advance(Duration.ofDays(3));
            assertThat(first.await(WAIT)).isEqualTo("shipped pen");

            WorkflowHandle<String> order = engine.start("fulfil", "order-1", "book", String.class);
            await().atMost(WAIT).until(() -> order.status() == WorkflowStatus.SUSPENDED);
            assertThat(engine.runNow("fulfil", "order-1")).as("not due before the clock moves").isFalse();

            long started = System.nanoTime();
            WAYMARK.clock().advance(Duration.ofDays(3));
            String shipped = order.await(WAIT);
            Duration sleepToResume = Duration.ofNanos(System.nanoTime() - started);

            log.info("three days of sleep to the shipped result: {} ms", sleepToResume.toMillis());
            assertThat(shipped).isEqualTo("shipped book");
            assertThat(charged).hasValue(2);
            assertThat(sleepToResume).isLessThan(Duration.ofSeconds(1));
        }
    }
}
