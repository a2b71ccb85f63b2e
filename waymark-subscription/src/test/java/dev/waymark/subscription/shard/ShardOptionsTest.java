package dev.waymark.subscription.shard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.waymark.core.RetryPolicy;
import dev.waymark.store.EventStore;
import dev.waymark.subscription.SubscriptionConfigException;
import dev.waymark.subscription.Target;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/** The documented defaults of a sharded pool. */
class ShardOptionsTest {

    @Test
    void the_defaults_are_a_30_s_lease_renewed_every_10_s_batch_100_1_s_retry_delay_and_5_deliveries() {
        Target target = Target.category("orders");
        ShardOptions expected = new ShardOptions(target, 8, Duration.ofSeconds(30), Duration.ofSeconds(10), 100,
                RetryPolicy.fixed(5, Duration.ofSeconds(1)));
        assertThat(ShardOptions.defaults(target, 8)).isEqualTo(expected);
        // a builder given only the shard count holds the same (neither building touches the database)
        try (EventStore store = EventStore.builder(new PGSimpleDataSource()).build()) {
            assertThat(ShardedSubscription.builder(store, "orders-pool", target).shards(8).options())
                    .isEqualTo(expected);
        }
    }

    @Test
    void a_null_listener_is_refused_instead_of_meaning_none() {
        // before: listener(null) silently meant ShardListener.NONE, where every other null is an error
        try (EventStore store = EventStore.builder(new PGSimpleDataSource()).build()) {
            assertThatThrownBy(() -> ShardedSubscription.builder(store, "orders-pool", Target.category("orders"))
                    .listener(null)).isInstanceOf(SubscriptionConfigException.class)
                    .hasMessage("listener must not be null (ShardListener.NONE for none)");
        }
    }
}
