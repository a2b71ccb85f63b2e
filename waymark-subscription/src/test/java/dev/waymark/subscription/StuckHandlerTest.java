package dev.waymark.subscription;

import static dev.waymark.subscription.SubscriptionFixture.append;
import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.waymark.store.EventStore;
import dev.waymark.subscription.micrometer.SubscriptionMetrics;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A plain subscription's handler that has not returned after the stuck threshold, with no stop
 * requested, is reported (a listener event, the stuck-handlers gauge, one WARN line) and cleared
 * when it returns; a handler still running when a stop is requested is not reported as stuck.
 */
class StuckHandlerTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

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
    void a_handler_blocked_past_the_threshold_is_reported_counted_and_cleared() throws Exception {
        append(store, "plainstuck-1", "E");
        CountDownLatch release = new CountDownLatch(1);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        SubscriptionMetrics metrics = new SubscriptionMetrics(registry);
        List<String> heard = new CopyOnWriteArrayList<>();
        SubscriptionListener listener = new SubscriptionListener() {
            @Override
            public void started(SubscriptionConfig config, dev.waymark.store.GlobalPosition position) {
                metrics.started(config, position);
            }

            @Override
            public void handlerStuck(SubscriptionConfig config, Delivery delivery, Duration running) {
                heard.add("stuck " + delivery.event().streamName() + " " + (running.toMillis() >= 200));
                metrics.handlerStuck(config, delivery, running);
            }

            @Override
            public void handlerUnstuck(SubscriptionConfig config, Delivery delivery, Duration took) {
                heard.add("unstuck " + delivery.event().streamName());
                metrics.handlerUnstuck(config, delivery, took);
            }
        };
        List<String> lines;
        try (Subscription s = Subscription.builder(store, "plainstuck", Target.category("plainstuck"))
                .stuckHandlerThreshold(Duration.ofMillis(200)).listener(listener).start(d -> {
                    release.await();
                    return Ack.ok();
                })) {
            lines = LogCapture.lines(() -> {
                // before: nothing was logged or heard while the handler hung
                await().atMost(WAIT).until(() -> heard.equals(List.of("stuck plainstuck-1 true")));
                assertThat(registry.get("waymark.subscription.stuck_handlers").tag("subscription", "plainstuck")
                        .gauge().value()).isEqualTo(1);
                release.countDown();
                await().atMost(WAIT).until(() -> heard.size() == 2);
            });
            assertThat(heard).containsExactly("stuck plainstuck-1 true", "unstuck plainstuck-1");
            assertThat(registry.get("waymark.subscription.stuck_handlers").gauge().value()).isZero();
        } finally {
            release.countDown();
        }
        assertThat(lines).filteredOn(l -> l.contains(" WARN ") && l.contains("has not returned"))
                .singleElement().satisfies(l -> assertThat(l).contains("subscription plainstuck:", "plainstuck-1@1",
                        "attempt 1", "stuckHandlerThreshold 200 ms"));
    }

    @Test
    void a_handler_still_running_when_a_stop_is_requested_is_not_reported_stuck() throws Exception {
        append(store, "stopping-1", "E");
        CountDownLatch entered = new CountDownLatch(1);
        List<String> heard = new CopyOnWriteArrayList<>();
        Subscription s = Subscription.builder(store, "stopping", Target.category("stopping"))
                .stuckHandlerThreshold(Duration.ofMillis(300))
                .listener(new SubscriptionListener() {
                    @Override
                    public void handlerStuck(SubscriptionConfig config, Delivery delivery, Duration running) {
                        heard.add("stuck");
                    }
                })
                .start(d -> {
                    entered.countDown();
                    new CountDownLatch(1).await(); // returns only when interrupted by the stop
                    return Ack.ok();
                });
        entered.await();
        assertThat(s.stop(Duration.ofSeconds(1))).isTrue(); // the grace runs past the threshold
        assertThat(heard).isEmpty();
    }

    @Test
    void the_threshold_is_validated() {
        for (Duration bad : new Duration[]{null, Duration.ofMillis(9), Duration.ofHours(24).plusMillis(1)}) {
            assertThatThrownBy(() -> Subscription.builder(store, "s", Target.all()).stuckHandlerThreshold(bad)
                    .config()).isInstanceOf(SubscriptionConfigException.class)
                    .hasMessageContaining("stuckHandlerThreshold must be between 10 ms and 24 h");
        }
        assertThat(Subscription.builder(store, "s", Target.all()).config().stuckHandlerThreshold())
                .isEqualTo(SubscriptionBuilder.DEFAULT_STUCK_HANDLER_THRESHOLD).isEqualTo(Duration.ofSeconds(60));
    }
}
