package dev.waymark.subscription;

import static dev.waymark.subscription.SubscriptionFixture.append;
import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.store.EventStore;
import dev.waymark.store.GlobalPosition;
import dev.waymark.store.Partition;
import dev.waymark.store.RecordedEvent;
import dev.waymark.subscription.shard.ShardedSubscription;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link Target#all()}: every stream of the store, whatever its category (a database of its own, so
 * "every event" is what this class appended).
 */
class AllStreamsTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static EventStore store;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        for (int v = 0; v < 3; v++) {
            for (int s = 0; s < 8; s++) {
                append(store, "alpha-" + s, "A");
                append(store, "beta-" + s, "B");
            }
            append(store, "solo", "S"); // a stream with no '-': its own category
        }
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    /** Every event of the store now, by id. */
    private static Set<UUID> everyEvent() {
        return store.allForward(GlobalPosition.START, 500).map(RecordedEvent::eventId).collect(Collectors.toSet());
    }

    /** Asserts each stream's events were delivered in version order. */
    private static void assertStreamOrder(List<RecordedEvent> delivered) {
        Map<String, Long> last = new HashMap<>();
        for (RecordedEvent e : delivered) {
            Long previous = last.put(e.streamName(), e.streamVersion());
            assertThat(e.streamVersion()).as("%s in order", e.streamName())
                    .isEqualTo(previous == null ? 1 : previous + 1);
        }
    }

    @Test
    void a_plain_subscription_over_all_streams_delivers_every_category_once_in_order_then_live_events() {
        Recorder recorder = Recorder.ok();
        try (Subscription s = Subscription.builder(store, "everything", Target.all()).batchSize(7)
                .pollInterval(Duration.ofMillis(200)).start(recorder)) {
            Set<UUID> before = everyEvent();
            await().atMost(WAIT).until(() -> recorder.size() >= before.size());
            append(store, "gamma-1", "Live");
            await().atMost(WAIT).until(() -> recorder.types().contains("Live"));
            List<RecordedEvent> delivered = recorder.deliveries.stream().map(Delivery::event).toList();
            assertThat(delivered).extracting(RecordedEvent::eventId).doesNotHaveDuplicates()
                    .containsExactlyInAnyOrderElementsOf(everyEvent());
            assertThat(delivered).extracting(RecordedEvent::position).isSorted();
            assertThat(delivered).extracting(RecordedEvent::streamName).contains("alpha-0", "beta-7", "solo",
                    "gamma-1");
            assertStreamOrder(delivered);
        }
    }

    @Test
    void consumer_group_members_over_all_streams_split_them_disjointly_and_completely() {
        Recorder r0 = Recorder.ok();
        Recorder r1 = Recorder.ok();
        try (Subscription m0 = Subscription.builder(store, "halves", Target.all()).consumerGroup(0, 2).start(r0);
                Subscription m1 = Subscription.builder(store, "halves", Target.all()).consumerGroup(1, 2).start(r1)) {
            Set<UUID> every = everyEvent();
            await().atMost(WAIT).until(() -> r0.size() + r1.size() >= every.size());
            assertThat(r0.deliveries)
                    .allSatisfy(d -> assertThat(Partition.of(0, 2).owns(d.event().streamName())).isTrue());
            assertThat(r1.deliveries)
                    .allSatisfy(d -> assertThat(Partition.of(1, 2).owns(d.event().streamName())).isTrue());
            List<UUID> union = new CopyOnWriteArrayList<>();
            r0.deliveries.forEach(d -> union.add(d.event().eventId()));
            r1.deliveries.forEach(d -> union.add(d.event().eventId()));
            assertThat(union).doesNotHaveDuplicates().containsExactlyInAnyOrderElementsOf(every);
        }
    }

    @Test
    void a_sharded_pool_over_all_streams_delivers_every_event_once_in_stream_order() {
        Map<UUID, String> handledBy = new ConcurrentHashMap<>();
        List<RecordedEvent> delivered = new CopyOnWriteArrayList<>();
        Map<String, Set<String>> workersOfStream = new ConcurrentHashMap<>();
        ShardedSubscription a = pool().start(d -> record("a", d.event(), handledBy, delivered, workersOfStream));
        ShardedSubscription b = pool().start(d -> record("b", d.event(), handledBy, delivered, workersOfStream));
        try {
            Set<UUID> every = everyEvent();
            await().atMost(WAIT).until(() -> handledBy.keySet().equals(every)
                    && a.ownedBuckets().size() == 2 && b.ownedBuckets().size() == 2);
            append(store, "delta-1", "Live");
            append(store, "solo", "Live");
            await().atMost(WAIT).until(() -> handledBy.keySet().equals(everyEvent()));
            assertThat(delivered).extracting(RecordedEvent::eventId).doesNotHaveDuplicates();
            assertThat(workersOfStream).containsKeys("alpha-0", "beta-0", "solo", "delta-1");
            for (String stream : workersOfStream.keySet()) {
                assertStreamOrder(delivered.stream().filter(e -> e.streamName().equals(stream)).toList());
            }
        } finally {
            a.stop(Duration.ofSeconds(5));
            b.stop(Duration.ofSeconds(5));
        }
    }

    private static dev.waymark.subscription.shard.ShardedSubscriptionBuilder pool() {
        return ShardedSubscription.builder(store, "all-pool", Target.all()).shards(4)
                .leaseTtl(Duration.ofSeconds(3)).renewInterval(Duration.ofMillis(300));
    }

    private static Ack record(String worker, RecordedEvent event, Map<UUID, String> handledBy,
            List<RecordedEvent> delivered, Map<String, Set<String>> workersOfStream) {
        delivered.add(event);
        handledBy.put(event.eventId(), worker);
        workersOfStream.computeIfAbsent(event.streamName(), k -> ConcurrentHashMap.newKeySet()).add(worker);
        return Ack.ok();
    }
}
