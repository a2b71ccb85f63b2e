package dev.waymark.workflow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.store.EventStore;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import dev.waymark.testkit.Waits;
import dev.waymark.workflow.backpressure.Backpressure;
import dev.waymark.workflow.micrometer.BacklogMetrics;
import dev.waymark.workflow.resume.ResumeOptions;
import dev.waymark.workflow.resume.ResumeWorker;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Intake that outruns the workflows: one thread starts workflows as fast as it can while a resume
 * worker of concurrency 2 runs them (a 5 ms step, a 30 ms durable sleep, a step). With backpressure the
 * backlog, measured from the table by an outside observer, never exceeds the bound and every workflow
 * completes; without it the backlog gauges show the backlog growing far past that bound.
 */
class BackpressureTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static final int WORKFLOWS = 240;
    private static final long BOUND = 30;
    private static final Duration WAIT = Waits.WAIT.plusSeconds(30); // a backlog of runs drains first

    private static EventStore store;
    private static WorkflowRegistry registry;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        registry = new WorkflowRegistry().register("slow", String.class, String.class, (ctx, in) -> {
            ctx.step("work", String.class, () -> {
                Thread.sleep(5); // the work the step stands for
                return "done";
            });
            ctx.sleep("pause", Duration.ofMillis(30));
            return ctx.step("finish", String.class, () -> in);
        });
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    @Test
    void with_backpressure_intake_waits_and_the_backlog_stays_under_its_bound() throws Exception {
        try (WorkflowEngine engine = WorkflowEngine.builder(store, registry).runOnStart(false)
                .backpressure(Backpressure.maxBacklog(BOUND, Duration.ofSeconds(60))).build();
                ResumeWorker worker = engine.resumeWorker(ResumeOptions.builder().concurrency(2).build()).start()) {
            long maxSeen = intake(engine, "bp-");
            await("every workflow completed").atMost(WAIT).until(() -> completed("bp-") == WORKFLOWS);
            assertThat(maxSeen).as("largest backlog the observer saw").isLessThanOrEqualTo(BOUND)
                    .isGreaterThan(BOUND / 3);
            assertThat(engine.acceptsStarts()).isTrue();
        }
    }

    @Test
    void without_backpressure_the_metrics_show_the_backlog_grow_past_what_the_bound_would_allow() throws Exception {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        try (WorkflowEngine engine = WorkflowEngine.builder(store, registry).runOnStart(false).build();
                ResumeWorker worker = engine.resumeWorker(ResumeOptions.builder().concurrency(2).build()).start()) {
            BacklogMetrics.bind(meters, engine);
            AtomicLong maxGauge = new AtomicLong();
            AtomicBoolean stop = new AtomicBoolean();
            Thread scraper = Thread.ofPlatform().name("scraper").start(() -> {
                while (!stop.get()) {
                    double runnable = meters.get("waymark.workflow.backlog.runnable").gauge().value();
                    double sleeping = meters.get("waymark.workflow.backlog.sleeping").gauge().value();
                    maxGauge.accumulateAndGet((long) (runnable + sleeping), Math::max);
                    java.util.concurrent.locks.LockSupport.parkNanos(20_000_000); // a scrape every 20 ms
                }
            });
            long maxSeen = intake(engine, "free-");
            await("every workflow completed").atMost(WAIT).until(() -> completed("free-") == WORKFLOWS);
            stop.set(true);
            scraper.join(10_000);
            assertThat(maxSeen).as("largest backlog the observer saw").isGreaterThan(3 * BOUND);
            assertThat(maxGauge.get()).as("largest backlog the gauges showed").isGreaterThan(3 * BOUND);
            // the gauges read a sample at most 100 ms old: the next one sees the drained backlog
            await("the gauge shows the backlog drained").atMost(Duration.ofSeconds(10))
                    .until(() -> meters.get("waymark.workflow.backlog.runnable").gauge().value() == 0);
            assertThat(meters.get("waymark.workflow.intake.open").gauge().value()).isEqualTo(1);
        }
    }

    /** Starts the workflows from one thread as fast as start returns; returns the largest backlog observed meanwhile. */
    private static long intake(WorkflowEngine engine, String prefix) throws Exception {
        AtomicLong max = new AtomicLong();
        AtomicBoolean done = new AtomicBoolean();
        Thread observer = Thread.ofPlatform().name("observer").start(() -> {
            while (!done.get()) {
                max.accumulateAndGet(active(), Math::max);
            }
        });
        try {
            for (int i = 0; i < WORKFLOWS; i++) {
                engine.start("slow", prefix + i, "w" + i, String.class);
            }
        } finally {
            done.set(true);
            observer.join(10_000);
        }
        return max.get();
    }

    /** Running instances and instances suspended on a wake time, read from the table itself. */
    private static long active() {
        return count("SELECT count(*) FROM waymark.workflows WHERE status = 'running'"
                + " OR (status = 'suspended' AND wake_after IS NOT NULL)");
    }

    private static long completed(String prefix) {
        return count("SELECT count(*) FROM waymark.workflows WHERE status = 'completed' AND id LIKE '" + prefix + "%'");
    }

    private static long count(String sql) {
        try (Connection c = POSTGRES.dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
