package dev.waymark.subscription;

import static dev.waymark.subscription.SubscriptionFixture.append;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.core.DeadLetterReason;
import dev.waymark.store.EventStore;
import dev.waymark.subscription.micrometer.SubscriptionMetrics;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class SubscriptionMetricsTest {

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
    void deliveries_dead_letters_and_checkpoints_are_counted() {
        append(store, "metered-1", "Fine", "Bad", "Fine");
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (Subscription s = Subscription.builder(store, "metered", Target.category("metered"))
                .listener(new SubscriptionMetrics(registry))
                .start(d -> d.event().type().equals("Bad")
                        ? Ack.deadLetter(DeadLetterReason.poison("no"))
                        : Ack.ok())) {
            await().atMost(Duration.ofSeconds(15)).until(() -> registry.find("waymark.subscription.checkpoints")
                    .counter() != null && DeadLetters.of(store).count("metered") == 1);
        }
        assertThat(registry.get("waymark.subscription.deliveries").tag("outcome", "ok").counter().count()).isEqualTo(2);
        assertThat(registry.get("waymark.subscription.deliveries").tag("outcome", "dead_letter").counter().count())
                .isEqualTo(1);
        assertThat(registry.get("waymark.subscription.dead_letters").tag("reason", "poison").counter().count())
                .isEqualTo(1);
        assertThat(registry.get("waymark.subscription.checkpoints").tag("subscription", "metered").counter().count())
                .isGreaterThanOrEqualTo(1);
    }
}
