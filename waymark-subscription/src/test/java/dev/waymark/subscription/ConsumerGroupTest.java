package dev.waymark.subscription;

import static org.assertj.core.api.Assertions.assertThat;

import dev.waymark.store.EventStore;
import dev.waymark.store.GlobalPosition;
import dev.waymark.store.Partition;
import dev.waymark.store.RecordedEvent;
import dev.waymark.store.StreamNames;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Consumer-group reads: disjoint members, complete union, stream affinity, Java and SQL agree. */
class ConsumerGroupTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    private static EventStore store;

    @BeforeAll
    static void setUp() {
        store = EventStore.builder(POSTGRES.dataSource()).build();
        SubscriptionFixture.appendMany(store, "order", 40, 3);
        SubscriptionFixture.appendMany(store, "cart", 25, 2);
    }

    @AfterAll
    static void tearDown() {
        store.close();
    }

    private static List<RecordedEvent> readAll(Function<GlobalPosition, List<RecordedEvent>> page) {
        List<RecordedEvent> out = new ArrayList<>();
        GlobalPosition cursor = GlobalPosition.START;
        for (List<RecordedEvent> p; !(p = page.apply(cursor)).isEmpty(); cursor = p.get(p.size() - 1).position()) {
            out.addAll(p);
        }
        return out;
    }

    @Test
    void four_members_over_a_category_split_it_disjointly_and_completely() {
        assertGroupSplits(p -> readAll(c -> store.readCategoryForward("order", c, 7, p)),
                readAll(c -> store.readCategoryForward("order", c, 50)));
    }

    @Test
    void four_members_over_all_streams_split_them_disjointly_and_completely() {
        assertGroupSplits(p -> readAll(c -> store.readAllForward(c, 7, p)), readAll(c -> store.readAllForward(c, 50)));
    }

    @Test
    void a_group_of_one_equals_the_plain_read() {
        assertThat(readAll(c -> store.readAllForward(c, 9, Partition.WHOLE)))
                .isEqualTo(readAll(c -> store.readAllForward(c, 9)));
    }

    private static void assertGroupSplits(Function<Partition, List<RecordedEvent>> read, List<RecordedEvent> plain) {
        int size = 4;
        Set<UUID> union = new HashSet<>();
        Map<String, Integer> memberOfStream = new HashMap<>();
        int total = 0;
        for (int m = 0; m < size; m++) {
            Partition partition = Partition.of(m, size);
            List<RecordedEvent> slice = read.apply(partition);
            assertThat(slice).as("member %d reads something", m).isNotEmpty();
            assertThat(slice).extracting(RecordedEvent::position).isSorted();
            Map<String, Long> lastVersion = new HashMap<>();
            for (RecordedEvent e : slice) {
                // the SQL filter and the Java hash agree
                assertThat(StreamNames.member(e.streamName(), size)).isEqualTo(m);
                assertThat(partition.owns(e.streamName())).isTrue();
                Integer previousOwner = memberOfStream.put(e.streamName(), m);
                assertThat(previousOwner).as("stream %s owned by one member", e.streamName()).isIn(null, m);
                Long previous = lastVersion.put(e.streamName(), e.streamVersion());
                assertThat(e.streamVersion()).isEqualTo(previous == null ? 1 : previous + 1);
                assertThat(union.add(e.eventId())).as("disjoint").isTrue();
            }
            total += slice.size();
        }
        assertThat(total).isEqualTo(plain.size());
        assertThat(union).isEqualTo(new HashSet<>(plain.stream().map(RecordedEvent::eventId).toList()));
    }
}
