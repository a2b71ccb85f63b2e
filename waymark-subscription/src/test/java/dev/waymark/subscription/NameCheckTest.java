package dev.waymark.subscription;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.waymark.store.EventStore;
import dev.waymark.store.GlobalPosition;
import dev.waymark.store.InvalidInputException;
import dev.waymark.store.Partition;
import dev.waymark.subscription.shard.ShardedSubscription;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import java.util.List;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Subscription and checkpoint names with a NUL or another control or invisible character are
 * refused before the database is touched: by builders with their configuration exception, by calls
 * with {@link InvalidInputException}, each naming the character and showing the name printably.
 */
class NameCheckTest {

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

    private static final List<String> BAD = List.of("bad\u0000name", "bad\u0001name", "bad\u2028name",
            "bad\u202Ename", "bad\nname", "bad\uD800name");

    @Test
    void builders_refuse_a_name_with_a_control_or_invisible_character() {
        for (String name : BAD) {
            String shown = String.format("bad\\u%04Xname", (int) name.charAt(3));
            // before: a NUL reached the database from the subscription's thread (a generic StoreException
            // after start() had returned), and the other characters were stored
            assertThatThrownBy(() -> Subscription.builder(store, name, Target.all()).start(d -> Ack.ok()))
                    .as(shown).isInstanceOf(SubscriptionConfigException.class)
                    .hasMessageContaining("subscription name must not hold control or invisible characters")
                    .hasMessageContaining("'" + shown + "'")
                    .hasMessageContaining(String.format("U+%04X at index 3", (int) name.charAt(3)));
            assertThatThrownBy(() -> ShardedSubscription.builder(store, name, Target.all()).shards(2)
                    .start(d -> Ack.ok())).as(shown).isInstanceOf(SubscriptionConfigException.class)
                    .hasMessageContaining("must not hold control or invisible characters");
        }
    }

    @Test
    void calls_refuse_a_name_with_a_control_or_invisible_character_before_the_database() {
        Checkpoints checkpoints = Checkpoints.of(store);
        DeadLetters deadLetters = DeadLetters.of(store);
        for (String name : BAD) {
            List<ThrowingCallable> calls = List.of(
                    () -> checkpoints.get(name, Partition.WHOLE),
                    () -> checkpoints.save(name, Partition.WHOLE, GlobalPosition.START),
                    () -> checkpoints.reset(name, GlobalPosition.START),
                    () -> checkpoints.reset(name, Partition.WHOLE, GlobalPosition.START),
                    () -> checkpoints.list(name),
                    () -> deadLetters.list(name, Long.MAX_VALUE, 10),
                    () -> deadLetters.count(name),
                    () -> deadLetters.purge(name),
                    () -> SubscriptionLag.measure(store, name, Target.all(), Partition.WHOLE),
                    () -> ShardedSubscription.ownership(store, name),
                    () -> ShardedSubscription.release(store, name, "w-1"),
                    () -> ShardedSubscription.release(store, "pool", name));
            for (ThrowingCallable call : calls) {
                // before: a NUL came back from the database as a StoreException, the others were accepted
                assertThatThrownBy(call).isInstanceOf(InvalidInputException.class)
                        .hasMessageContaining("must not hold control or invisible characters")
                        .hasMessageContaining(String.format("U+%04X at index 3", (int) name.charAt(3)));
            }
        }
        assertThat(checkpoints.list(null)).isEmpty(); // nothing was written
    }
}
