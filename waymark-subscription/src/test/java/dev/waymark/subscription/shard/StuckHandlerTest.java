package dev.waymark.subscription.shard;

import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.waymark.store.EventData;
import dev.waymark.store.EventStore;
import dev.waymark.store.ExpectedVersion;
import dev.waymark.store.RecordedEvent;
import dev.waymark.subscription.Ack;
import dev.waymark.subscription.LogCapture;
import dev.waymark.subscription.SubscriptionConfigException;
import dev.waymark.subscription.Target;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A shard handler that has not returned after the stuck threshold, with no stop requested, is
 * reported (stuck readers, a listener event, one WARN line naming pool, bucket, event and how
 * long) and cleared when it returns.
 */
class StuckHandlerTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static final Duration THRESHOLD = Duration.ofMillis(300);
    private static EventStore store;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    private record Report(String kind, int bucket, UUID event, Duration time) {}

    @Test
    void a_handler_blocked_past_the_threshold_is_reported_and_cleared_when_it_returns() throws Exception {
        UUID blocked = store.append("stuck-1", ExpectedVersion.any(), EventData.json("E", "{}")).eventIds().get(0);
        CountDownLatch release = new CountDownLatch(1);
        List<Report> reports = new CopyOnWriteArrayList<>();
        ShardedSubscription worker = ShardedSubscription.builder(store, "stuckpool", Target.category("stuck"))
                .shards(1).leaseTtl(Duration.ofSeconds(3)).renewInterval(Duration.ofMillis(300))
                .stuckHandlerThreshold(THRESHOLD)
                .listener(new ShardListener() {
                    @Override
                    public void handlerStuck(String workerId, int bucket, RecordedEvent event, Duration running) {
                        reports.add(new Report("stuck", bucket, event.eventId(), running));
                    }

                    @Override
                    public void handlerUnstuck(String workerId, int bucket, RecordedEvent event, Duration took) {
                        reports.add(new Report("unstuck", bucket, event.eventId(), took));
                    }
                })
                .start(d -> {
                    release.await(); // a call that never returns by itself
                    return Ack.ok();
                });
        List<String> lines;
        try {
            lines = LogCapture.lines(() -> {
                // before: stuck_readers stayed 0 and nothing was logged or heard
                await().atMost(WAIT).until(() -> worker.stats().stuckReaders() == 1);
                assertThat(reports).singleElement().satisfies(r -> {
                    assertThat(r.kind()).isEqualTo("stuck");
                    assertThat(r.bucket()).isZero();
                    assertThat(r.event()).isEqualTo(blocked);
                    assertThat(r.time()).isGreaterThanOrEqualTo(THRESHOLD);
                });
                release.countDown();
                await().atMost(WAIT).until(() -> worker.stats().stuckReaders() == 0 && reports.size() == 2);
            });
        } finally {
            release.countDown();
            worker.stop(Duration.ofSeconds(5));
        }
        assertThat(reports.get(1)).satisfies(r -> {
            assertThat(r.kind()).isEqualTo("unstuck");
            assertThat(r.event()).isEqualTo(blocked);
        });
        assertThat(lines).filteredOn(l -> l.contains(" WARN ") && l.contains("has not returned"))
                .singleElement().satisfies(l -> assertThat(l).contains("sharded pool 'stuckpool' bucket 0",
                        "(worker " + worker.workerId() + ")", "on event " + blocked, "stuck-1@1",
                        "stuckHandlerThreshold 300 ms"));
    }

    @Test
    void the_threshold_is_validated() {
        for (Duration bad : new Duration[]{null, Duration.ofMillis(9), Duration.ofHours(24).plusMillis(1)}) {
            assertThatThrownBy(() -> ShardedSubscription.builder(store, "p", Target.all()).shards(1)
                    .stuckHandlerThreshold(bad).options()).isInstanceOf(SubscriptionConfigException.class)
                    .hasMessageContaining("stuckHandlerThreshold must be between 10 ms and 24 h");
        }
        assertThat(ShardOptions.defaults(Target.all(), 1).stuckHandlerThreshold())
                .isEqualTo(ShardOptions.DEFAULT_STUCK_HANDLER_THRESHOLD).isEqualTo(Duration.ofSeconds(60));
    }
}
