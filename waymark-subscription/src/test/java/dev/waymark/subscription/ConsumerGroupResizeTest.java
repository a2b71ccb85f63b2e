package dev.waymark.subscription;

import static dev.waymark.subscription.SubscriptionFixture.append;
import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.waymark.store.EventStore;
import dev.waymark.store.GlobalPosition;
import dev.waymark.store.Partition;
import dev.waymark.store.RecordedEvent;
import dev.waymark.subscription.shard.ShardedSubscription;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A consumer group restarted with another size refuses its old checkpoints instead of skipping events. */
class ConsumerGroupResizeTest {

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

    private static SubscriptionBuilder member(String category, int member, int size) {
        return Subscription.builder(store, "sub-" + category, Target.category(category))
                .consumerGroup(member, size)
                .pollInterval(Duration.ofMillis(200));
    }

    private static void appendToEachStream(String category, int streams, String type) {
        for (int s = 0; s < streams; s++) {
            append(store, category + "-" + s, type);
        }
    }

    @Test
    void a_group_restarted_with_another_size_refuses_to_start_and_delivers_nothing_until_resized() throws Exception {
        String c = "grow";
        appendToEachStream(c, 30, "First");
        Recorder first = Recorder.ok();
        try (Subscription m0 = member(c, 0, 2).start(first); Subscription m1 = member(c, 1, 2).start(first)) {
            await().atMost(WAIT).until(() -> first.size() == 30);
        }
        assertThat(Checkpoints.of(store).list("sub-" + c)).extracting(CheckpointRow::groupSize).containsExactly(2, 2);
        appendToEachStream(c, 30, "Second");

        // before: each member of 3 resumed at the checkpoint of the same member of 2, and new member 0
        // never received the events of streams old member 1 had not read yet; then each member
        // returned from start() and died a moment later
        Recorder grown = Recorder.ok();
        for (int m = 0; m < 3; m++) {
            int member = m;
            assertThatThrownBy(() -> member(c, member, 3).start(grown))
                    .isInstanceOfSatisfying(ConsumerGroupSizeMismatchException.class, e -> {
                        assertThat(e.subscription()).isEqualTo("sub-grow");
                        assertThat(e.configuredSize()).isEqualTo(3);
                        assertThat(e.storedSizes()).containsExactly(2);
                        assertThat(e).hasMessageContaining("subscription 'sub-grow' was started as a consumer group"
                                + " of 3 but its checkpoints were written by a group of 2")
                                .hasMessageContaining("To resize, follow docs/OPERATIONS.md, \"Resizing\"")
                                .hasMessageContaining("DELETE FROM waymark.checkpoints WHERE subscription = 'sub-grow'")
                                .hasMessageContaining(
                                        "Checkpoints.of(store).reset(\"sub-grow\", Partition.of(i, 3), P)")
                                .hasMessageContaining("start every member with consumerGroup(i, 3)");
                    });
        }
        assertThat(grown.size()).isZero();
        assertThat(Checkpoints.of(store).list("sub-" + c)).extracting(CheckpointRow::groupSize).containsExactly(2, 2);

        // the documented resize: every member from the smallest checkpoint, written with the new size
        GlobalPosition smallest = Checkpoints.of(store).list("sub-" + c).stream().map(CheckpointRow::position)
                .min(Comparator.naturalOrder()).orElseThrow();
        try (Connection admin = POSTGRES.dataSource().getConnection();
                PreparedStatement delete = admin.prepareStatement(
                        "DELETE FROM waymark.checkpoints WHERE subscription = 'sub-grow'")) {
            delete.executeUpdate();
        }
        for (int m = 0; m < 3; m++) {
            Checkpoints.of(store).reset("sub-" + c, Partition.of(m, 3), smallest);
        }
        Recorder resized = Recorder.ok();
        List<Subscription> restarted = new ArrayList<>();
        try {
            IntStream.range(0, 3).forEach(m -> restarted.add(member(c, m, 3).start(resized)));
            Set<UUID> second = new HashSet<>(store.readCategoryForward(c, GlobalPosition.START, 100).stream()
                    .filter(e -> e.type().equals("Second")).map(RecordedEvent::eventId).toList());
            await().atMost(WAIT).until(() -> resized.deliveries.stream().map(d -> d.event().eventId()).toList()
                    .containsAll(second));
            assertThat(restarted).allSatisfy(s -> assertThat(s.isRunning()).isTrue());
        } finally {
            restarted.forEach(Subscription::close);
        }
    }

    @Test
    void a_sharded_pool_under_the_name_of_a_plain_subscription_refuses_to_start() throws Exception {
        String c = "pooled";
        appendToEachStream(c, 4, "A");
        Recorder whole = Recorder.ok();
        try (Subscription s = Subscription.builder(store, "sub-" + c, Target.category(c)).start(whole)) {
            await().atMost(WAIT).until(() -> whole.size() == 4);
        }
        // before: the pool started, and every bucket's reader refused the checkpoints pass after pass
        List<String> handled = new java.util.concurrent.CopyOnWriteArrayList<>();
        assertThatThrownBy(() -> ShardedSubscription.builder(store, "sub-" + c, Target.category(c)).shards(4)
                .start(d -> {
                    handled.add(d.event().streamName());
                    return Ack.ok();
                }))
                .isInstanceOfSatisfying(ConsumerGroupSizeMismatchException.class, e -> {
                    assertThat(e.configuredSize()).isEqualTo(4);
                    assertThat(e.storedSizes()).containsExactly(1);
                });
        assertThat(handled).isEmpty();
    }

    @Test
    void a_plain_subscription_turned_into_a_group_refuses_its_single_checkpoint() throws Exception {
        String c = "split";
        appendToEachStream(c, 4, "A");
        Recorder whole = Recorder.ok();
        try (Subscription s = Subscription.builder(store, "sub-" + c, Target.category(c)).start(whole)) {
            await().atMost(WAIT).until(() -> whole.size() == 4);
        }
        Recorder member = Recorder.ok();
        // member 1 has no checkpoint of its own; before: start() returned and the member died at once
        assertThatThrownBy(() -> member(c, 1, 2).start(member))
                .isInstanceOf(ConsumerGroupSizeMismatchException.class);
        assertThat(member.size()).isZero();
        assertThat(Checkpoints.of(store).list("sub-" + c)).extracting(CheckpointRow::groupSize).containsExactly(1);
    }

    @Test
    void a_start_after_a_position_checks_the_group_size_and_keeps_the_stored_one() throws Exception {
        String c = "after";
        appendToEachStream(c, 6, "A");
        Recorder two = Recorder.ok();
        try (Subscription m0 = member(c, 0, 2).start(two); Subscription m1 = member(c, 1, 2).start(two)) {
            await().atMost(WAIT).until(() -> two.size() == 6);
        }
        GlobalPosition head = store.headPosition();
        appendToEachStream(c, 6, "B");
        // before: the size check was skipped, the member delivered, and its checkpoint rewrote the
        // stored size to 3 beside the other member's 2
        Recorder three = Recorder.ok();
        assertThatThrownBy(() -> member(c, 0, 3).startFrom(StartPosition.after(head)).start(three))
                .isInstanceOfSatisfying(ConsumerGroupSizeMismatchException.class, e -> {
                    assertThat(e.configuredSize()).isEqualTo(3);
                    assertThat(e.storedSizes()).containsExactly(2);
                });
        assertThat(three.size()).isZero();
        assertThat(Checkpoints.of(store).list("sub-" + c)).extracting(CheckpointRow::groupSize).containsExactly(2, 2);
        // the same size after a position starts as before
        Recorder again = Recorder.ok();
        try (Subscription m1 = member(c, 1, 2).startFrom(StartPosition.after(head)).start(again)) {
            await().atMost(WAIT).until(() -> again.size() > 0);
        }
    }
}
