package dev.waymark.workflow.resume;

import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.metrics.IMetricsTracker;
import com.zaxxer.hikari.metrics.MetricsTrackerFactory;
import com.zaxxer.hikari.metrics.PoolStats;
import dev.waymark.store.EventStore;
import dev.waymark.store.StoreUnavailableException;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import dev.waymark.workflow.WorkflowEngine;
import dev.waymark.workflow.status.WorkflowInfo;
import dev.waymark.workflow.WorkflowRegistry;
import dev.waymark.workflow.status.WorkflowStatus;
import dev.waymark.workflow.micrometer.WorkflowMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The database going out of reach in the middle of an attempt is a transient store error, not a
 * crash: no attempt is counted (with a budget of one, a crash would fail the workflow at once), the
 * lease is released once the database is back, and the next pass finishes the workflow.
 */
class StoreOutageTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static final AtomicInteger actions = new AtomicInteger();

    private static HikariDataSource pool;
    private static PoolOutage outage;
    private static EventStore store;
    private static WorkflowEngine engine;

    @BeforeAll
    static void setUp() {
        outage = new PoolOutage();
        pool = outage.pool();
        store = EventStore.builder(pool).build();
        WorkflowRegistry registry = new WorkflowRegistry()
                .register("payment", String.class, String.class, (ctx, in) -> ctx.step("charge", String.class, () -> {
                    if (actions.incrementAndGet() == 1) {
                        outage.begin(); // the database goes out of reach once the action has run,
                    } // until this run's own attempt to journal the step has failed
                    return "charged " + in;
                }));
        engine = WorkflowEngine.builder(store, registry).runOnStart(false).build();
    }

    @AfterAll
    static void tearDown() {
        outage.end();
        engine.close();
        store.close();
        pool.close();
    }

    @Test
    void an_outage_during_an_attempt_costs_no_attempt_and_a_later_pass_finishes_the_workflow() throws Exception {
        engine.start("payment", "p-1", "42", String.class);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        RecordingResumeListener recorder = new RecordingResumeListener();
        WorkflowMetrics metrics = new WorkflowMetrics(registry, recorder);
        List<ResumeEvent> events = recorder.events;
        ResumeOptions options = ResumeOptions.builder().concurrency(1)
                .retry(ResumeOptions.DEFAULT_RETRY.withMaxAttempts(1))
                .leaseTtl(Duration.ofSeconds(30)).listener(metrics).build(); // no renewal during the outage
        try (ResumeWorker worker = engine.resumeWorker(options)) {
            ResumeSummary first = worker.resumeOnce();
            assertThat(first.transientErrors()).isEqualTo(1);
            assertThat(first.crashed()).isZero();
            assertThat(first.failed()).isZero();
            assertThat(events).singleElement().isInstanceOfSatisfying(ResumeEvent.TransientError.class,
                    e -> assertThat(e.error()).isInstanceOf(StoreUnavailableException.class));
            WorkflowInfo during = engine.handle("payment", "p-1", String.class).info();
            assertThat(during.status()).isEqualTo(WorkflowStatus.RUNNING);
            assertThat(during.attempts()).isZero();
            assertThat(during.lastError()).isNull();

            // the database is back: with a crash counted instead, the budget of one would have failed it
            await().atMost(WAIT).until(() -> engine.handle("payment", "p-1", String.class).info().leaseOwner() == null);
            assertThat(worker.resumeOnce().completed()).isEqualTo(1);
        }
        WorkflowInfo done = engine.handle("payment", "p-1", String.class).info();
        assertThat(done.status()).isEqualTo(WorkflowStatus.COMPLETED);
        assertThat(done.attempts()).isZero();
        assertThat(engine.handle("payment", "p-1", String.class).await(WAIT)).isEqualTo("charged 42");
        assertThat(actions).hasValue(2); // the first result was never journaled: the action ran again
        assertThat(registry.get("waymark.workflow.resume.errors").counter().count()).isEqualTo(1);
        assertThat(registry.get("waymark.workflow.resume.crashed").counter().count()).isZero();
    }

    /**
     * Takes every connection of a pool and holds them until a chosen thread's borrow has timed out:
     * for that thread the database is out of reach (its borrow fails as when the server is down),
     * and right after it the database is back, as in a short network outage.
     */
    private static final class PoolOutage implements MetricsTrackerFactory {
        private final Queue<Connection> held = new ConcurrentLinkedQueue<>();
        private final AtomicInteger timeouts = new AtomicInteger();
        private volatile Thread victim;
        private volatile CountDownLatch over = new CountDownLatch(0);
        private HikariDataSource pool;

        @Override
        public IMetricsTracker create(String poolName, PoolStats stats) {
            return new IMetricsTracker() {
                @Override
                public void recordConnectionTimeout() {
                    timeouts.incrementAndGet();
                    if (Thread.currentThread() == victim) {
                        over.countDown();
                    }
                }
            };
        }

        HikariDataSource pool() {
            HikariConfig config = new HikariConfig();
            config.setJdbcUrl(POSTGRES.jdbcUrl());
            config.setMaximumPoolSize(4);
            config.setConnectionTimeout(500); // a borrow from an exhausted pool fails fast
            config.setMetricsTrackerFactory(this);
            pool = new HikariDataSource(config);
            return pool;
        }

        /**
         * Takes every connection (until a borrow times out), then returns: the outage lasts until a
         * borrow of the calling thread has timed out.
         */
        void begin() {
            victim = Thread.currentThread();
            CountDownLatch outage = new CountDownLatch(1);
            over = outage;
            int before = timeouts.get();
            Thread.ofPlatform().daemon().name("pool-outage").start(() -> {
                while (timeouts.get() == before) {
                    try {
                        held.add(pool.getConnection());
                    } catch (SQLException timedOut) {
                        // every connection is taken
                    }
                }
                try {
                    outage.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                end();
            });
            await().atMost(WAIT).until(() -> timeouts.get() > before);
        }

        /** Hands every taken connection back. */
        void end() {
            over.countDown();
            for (Connection c; (c = held.poll()) != null;) {
                try {
                    c.close();
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
    }
}
