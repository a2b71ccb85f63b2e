package dev.waymark.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.waymark.store.micrometer.StoreMetrics;
import dev.waymark.testkit.PostgresExtension;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The group commit meters of {@link StoreMetrics#appendBatches} count every append once and show batching. */
class GroupCommitMetricsTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = StoreFixture.migratedPostgres();

    @BeforeAll
    static void setUp() {}

    @Test
    void group_commits_show_as_batch_size_wait_and_duration() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        int writers = 8;
        try (EventStore batching = EventStore.builder(POSTGRES.dataSource())
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
}
