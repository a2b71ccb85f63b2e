package dev.waymark.workflow;

import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.store.EventStore;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.FailingDataSource;
import dev.waymark.testkit.PostgresExtension;
import dev.waymark.workflow.gc.CollectResult;
import dev.waymark.workflow.gc.CollectorListener;
import dev.waymark.workflow.internal.Instances;
import dev.waymark.workflow.internal.LeaseKeeper;
import dev.waymark.workflow.listener.WorkflowListener;
import dev.waymark.workflow.resume.ResumeEvent;
import dev.waymark.workflow.resume.ResumeListener;
import dev.waymark.workflow.resume.ResumeSummary;
import dev.waymark.workflow.resume.ResumeWorker;
import dev.waymark.workflow.status.WorkflowOutcome;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Errors thrown into the engine's machinery. A listener that throws, even a
 * {@code NoClassDefFoundError} (a telemetry listener whose optional library is missing), is logged
 * and ignored: runs and resume passes go on. The background loops (resume passes, garbage
 * collection, lease renewal) go on after a pass throws an {@link Error} that no listener guard
 * catches (a {@code StackOverflowError}, an {@code OutOfMemoryError}); before, the resume loop's
 * thread ended, and a scheduled task that threw was never run again (collection stopped; every
 * lease of the process lapsed while its runs went on).
 */
class BackgroundErrorTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static EventStore store;
    private static WorkflowRegistry registry;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        registry = new WorkflowRegistry().register("plain", String.class, String.class,
                (ctx, in) -> ctx.step("only", String.class, () -> "done " + in));
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    private static NoClassDefFoundError missingLibrary() {
        return new NoClassDefFoundError("io/opentelemetry/api/trace/Tracer");
    }

    @Test
    void a_run_survives_a_listener_that_throws_an_error() throws Exception {
        WorkflowListener broken = new WorkflowListener() {
            @Override
            public void runStarted(String name, String id) {
                throw missingLibrary();
            }

            @Override
            public void runFinished(String name, String id, WorkflowOutcome<?> outcome, Throwable error,
                    Duration elapsed) {
                throw missingLibrary();
            }
        };
        try (WorkflowEngine engine = WorkflowTesting.fastEngine(store, registry).listener(broken).build()) {
            WorkflowHandle<String> h = engine.start("plain", "run-1", "x", String.class);
            assertThat(h.await(WAIT)).isEqualTo("done x");
            assertThat(h.info().leaseOwner()).isNull();
        }
    }

    @Test
    void a_resume_loop_survives_a_listener_that_throws_an_error() throws Exception {
        CountDownLatch firstPass = new CountDownLatch(1);
        ResumeListener broken = new ResumeListener() {
            @Override
            public void onPass(ResumeSummary summary, Duration elapsed, long pendingAwakeables, long runnableBacklog) {
                firstPass.countDown();
                throw missingLibrary();
            }
        };
        try (WorkflowEngine engine = WorkflowTesting.fastEngine(store, registry).runOnStart(false).build();
                ResumeWorker worker = engine
                        .resumeWorker(WorkflowTesting.fastResume().toBuilder().listener(broken).build()).start()) {
            assertThat(firstPass.await(20, TimeUnit.SECONDS)).isTrue(); // the listener has thrown once
            WorkflowHandle<String> h = engine.start("plain", "resumed-1", "y", String.class); // left to the worker
            assertThat(h.await(WAIT)).isEqualTo("done y");
            assertThat(worker.owner()).isNotBlank();
        }
    }

    @Test
    void the_resume_loop_goes_on_after_a_pass_threw_an_error() throws Exception {
        AtomicInteger passes = new AtomicInteger();
        List<Throwable> reported = new CopyOnWriteArrayList<>();
        ResumeListener overflowing = new ResumeListener() {
            @Override
            public void onPass(ResumeSummary summary, Duration elapsed, long pendingAwakeables, long runnableBacklog) {
                passes.incrementAndGet();
                throw new StackOverflowError("injected");
            }

            @Override
            public void onEvent(ResumeEvent event) {
                if (event instanceof ResumeEvent.PassFailed f) {
                    reported.add(f.error());
                }
            }
        };
        try (WorkflowEngine engine = WorkflowTesting.fastEngine(store, registry).runOnStart(false).build();
                ResumeWorker worker = engine
                        .resumeWorker(WorkflowTesting.fastResume().toBuilder().listener(overflowing).build())
                        .start()) {
            await().atMost(WAIT).until(() -> passes.get() >= 1); // a pass has thrown
            WorkflowHandle<String> h = engine.start("plain", "after-error", "y", String.class); // left to the worker
            assertThat(h.await(WAIT)).isEqualTo("done y");
            assertThat(reported).isNotEmpty().allMatch(StackOverflowError.class::isInstance);
            assertThat(worker.owner()).isNotBlank();
        }
    }

    @Test
    void the_collector_keeps_its_schedule_after_a_pass_threw_an_error() throws Exception {
        AtomicInteger passes = new AtomicInteger();
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        CollectorListener overflowing = new CollectorListener() {
            @Override
            public void onPass(CollectResult result, Duration elapsed) {
                if (passes.incrementAndGet() == 1) {
                    throw new StackOverflowError("injected");
                }
            }

            @Override
            public void onPassFailed(Throwable error) {
                failures.add(error);
            }
        };
        try (WorkflowEngine engine = WorkflowTesting.fastEngine(store, registry).build();
                WorkflowCollector collector = WorkflowCollector.start(engine.client(), Duration.ZERO,
                        Duration.ofMillis(20), 10,
                        overflowing)) {
            await().atMost(WAIT).until(() -> passes.get() >= 3);
            assertThat(collector.failedPasses()).isEqualTo(1);
            assertThat(failures).singleElement().isInstanceOf(StackOverflowError.class);
            // and it still collects
            assertThat(engine.start("plain", "collected-later", "z", String.class).await(WAIT)).isEqualTo("done z");
            await().atMost(WAIT).until(() -> engine.describe("plain", "collected-later").isEmpty());
        }
    }

    @Test
    void the_lease_keeper_renews_after_a_renewal_threw_an_error() {
        AtomicBoolean armed = new AtomicBoolean();
        AtomicInteger thrown = new AtomicInteger();
        DataSource failingOnce = FailingDataSource.failing(POSTGRES.dataSource(),
                () -> armed.compareAndSet(true, false) && thrown.incrementAndGet() > 0,
                () -> new OutOfMemoryError("injected"));
        Instances instances = new Instances(failingOnce, store.schema());
        Duration ttl = Duration.ofMillis(1500); // renewed every 500 ms
        instances.start("plain", "kept", "\"k\"", UUID.randomUUID(), null, "keeper-e", ttl);
        try (LeaseKeeper keeper = new LeaseKeeper(instances, "keeper-e", ttl)) {
            armed.set(true); // the next renewal throws
            keeper.hold(new Instances.Key("plain", "kept"));
            await().atMost(WAIT).until(() -> thrown.get() == 1);
            // before: no renewal after the error, and the lease lapsed 1.5 s after the last one
            await().during(Duration.ofSeconds(3)).atMost(WAIT).until(BackgroundErrorTest::leaseLive);
        }
    }

    private static boolean leaseLive() {
        return WorkflowTesting.count(POSTGRES, "SELECT count(*) FROM " + store.schema() + ".workflows"
                + " WHERE name = 'plain' AND id = 'kept' AND lease_expires_at > now()") == 1;
    }
}
