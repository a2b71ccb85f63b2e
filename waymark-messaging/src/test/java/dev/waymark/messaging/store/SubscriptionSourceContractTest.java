package dev.waymark.messaging.store;

import dev.waymark.core.RetryPolicy;
import dev.waymark.messaging.MessageSource;
import dev.waymark.messaging.MessageSourceContract;
import dev.waymark.store.EventData;
import dev.waymark.store.EventStore;
import dev.waymark.store.ExpectedVersion;
import dev.waymark.store.GlobalPosition;
import dev.waymark.store.Partition;
import dev.waymark.subscription.Checkpoints;
import dev.waymark.subscription.Subscription;
import dev.waymark.subscription.Target;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The adapter contract for {@link SubscriptionSource} over a real event store. */
class SubscriptionSourceContractTest extends MessageSourceContract {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static EventStore store;
    private static final AtomicInteger categories = new AtomicInteger();

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    @Override
    protected Fixture fixture(int messages) {
        String category = "contract" + categories.incrementAndGet();
        var result = store.append(category + "-1", ExpectedVersion.noStream(),
                IntStream.range(0, messages).mapToObj(i -> EventData.json("E", "{\"i\":" + i + "}")).toList());
        List<String> ids = result.eventIds().stream().map(UUID::toString).toList();
        GlobalPosition head = result.lastPosition();
        SubscriptionSource source = SubscriptionSource.of(Subscription.builder(store, "sub-" + category,
                Target.category(category)).retry(RetryPolicy.fixed(5, Duration.ZERO))
                .checkpointEvery(1, Duration.ZERO));
        return new Fixture() {
            @Override
            public MessageSource source() {
                return source;
            }

            @Override
            public List<String> expectedIds() {
                return ids;
            }

            @Override
            public boolean allAcknowledged() {
                return Checkpoints.of(store).get("sub-" + category, Partition.WHOLE).equals(Optional.of(head));
            }

            @Override
            public void close() {
                source.shutdown();
            }
        };
    }
}
