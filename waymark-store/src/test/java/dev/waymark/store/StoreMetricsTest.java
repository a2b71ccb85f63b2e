package dev.waymark.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.store.micrometer.StoreMetrics;
import dev.waymark.testkit.PostgresExtension;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The horizon gauges show events held back by an open writing transaction. */
class StoreMetricsTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = new PostgresExtension();

    private static EventStore store;

    @BeforeAll
    static void setUp() {
        store = StoreFixture.migratedStore(POSTGRES);
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    @Test
    void group_commits_show_as_batch_size_wait_and_duration() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        int writers = 8;
        try (EventStore batching = EventStore.builder(POSTGRES.dataSource()).groupCommitLanes(1)
                .appendBatchListener(StoreMetrics.appendBatches(registry, "waymark")).build()) {
            List<Thread> threads = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                String stream = "metered-" + w;
                threads.add(Thread.ofPlatform().name("metered-" + w).start(() -> {
                    for (int i = 0; i < 25; i++) {
                        batching.append(stream, ExpectedVersion.any(), StoreFixture.events(1));
                    }
                }));
            }
            for (Thread t : threads) {
                assertThat(t.join(Duration.ofSeconds(60))).isTrue();
            }
        }
        DistributionSummary size = registry.get("waymark.store.append.batch.size").tag("schema", "waymark").summary();
        assertThat(size.totalAmount()).as("every append counted once").isEqualTo(writers * 25.0);
        assertThat(size.max()).as("concurrent appends shared batches").isGreaterThan(1);
        assertThat(registry.get("waymark.store.append.batch.wait").timer().count()).isEqualTo(size.count());
        assertThat(registry.get("waymark.store.append.batch.duration").timer().totalTime(TimeUnit.NANOSECONDS))
                .isPositive();
        assertThat(registry.get("waymark.store.append.batch.alone").counter().count()).isZero();
    }

    @Test
    void an_open_writing_transaction_shows_as_hidden_events_and_writer_age() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        StoreMetrics.bind(store, registry, Duration.ZERO);
        assertThat(registry.get("waymark.store.horizon.hidden_events").gauge().value()).isZero();
        try (Connection writer = POSTGRES.dataSource().getConnection()) {
            writer.setAutoCommit(false);
            store.append(writer, "held-1", ExpectedVersion.any(), StoreFixture.events(1)); // holds an xid, uncommitted
            store.append("later-1", ExpectedVersion.any(), StoreFixture.events(2)); // committed, but behind the horizon
            assertThat(registry.get("waymark.store.horizon.hidden_events").gauge().value()).isEqualTo(2);
            // the held transaction's age (clock_timestamp() - xact_start, in whole milliseconds) soon exceeds 0
            // (before: >= 0, which holds with no writer at all)
            await("the held writer shows as the oldest writer").atMost(Duration.ofSeconds(5))
                    .until(() -> registry.get("waymark.store.horizon.oldest_writer").gauge().value() > 0);
            assertThat(store.readCategoryForward("later", GlobalPosition.START, 10)).isEmpty();
            writer.commit();
        }
        assertThat(registry.get("waymark.store.horizon.hidden_events").gauge().value()).isZero();
        assertThat(store.readCategoryForward("later", GlobalPosition.START, 10)).hasSize(2);
    }
}
