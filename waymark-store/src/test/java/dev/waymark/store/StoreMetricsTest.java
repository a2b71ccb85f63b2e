package dev.waymark.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.store.micrometer.StoreMetrics;
import dev.waymark.testkit.PostgresExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The horizon gauges show events held back by an open writing transaction; the query counter counts by purpose. */
class StoreMetricsTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = StoreFixture.migratedPostgres();

    private static EventStore store;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
    }

    @AfterAll
    static void tearDown() {
        store.close();
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

    @Test
    void the_query_counter_counts_each_statement_under_its_purpose() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        StoreMetrics.bind(store, registry, Duration.ofHours(1));
        double appends = registry.get("waymark.store.queries").tag("purpose", "append").functionCounter().count();
        double reads = registry.get("waymark.store.queries").tag("purpose", "read").functionCounter().count();

        store.append("counted-1", ExpectedVersion.any(), StoreFixture.events(3)); // one statement, three events
        store.readStreamForward("counted-1", 0, 10);
        store.readAllForward(GlobalPosition.START, 10);
        HeadWatch watch = store.headWatch();
        long before = watch.latest().sequence();
        watch.request();
        await().atMost(Duration.ofSeconds(5)).until(() -> watch.latest().sequence() > before);

        assertThat(registry.get("waymark.store.queries").tag("purpose", "append").functionCounter().count())
                .isEqualTo(appends + 1);
        assertThat(registry.get("waymark.store.queries").tag("purpose", "read").functionCounter().count())
                .isEqualTo(reads + 2);
        assertThat(registry.get("waymark.store.queries").tag("purpose", "probe").functionCounter().count())
                .isGreaterThanOrEqualTo(1);
        assertThat(watch.latest().head()).isEqualTo(store.headPosition());
        assertThat(store.queryCount(QueryPurpose.HORIZON)).isEqualTo(
                (long) registry.get("waymark.store.queries").tag("purpose", "horizon").functionCounter().count());
    }
}
