package dev.waymark.subscription.shard;

import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.store.EventData;
import dev.waymark.store.EventStore;
import dev.waymark.store.ExpectedVersion;
import dev.waymark.subscription.Ack;
import dev.waymark.subscription.LeaseLostException;
import dev.waymark.subscription.LogCapture;
import dev.waymark.subscription.Subscription;
import dev.waymark.subscription.Target;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Expected lease losses (a bucket taken over, a fenced checkpoint refused) are logged as WARN lines
 * with the state (pool, bucket, worker, epochs), without a stack trace; an unexpected failure keeps
 * its ERROR line and stack.
 */
class LeaseLossLogTest {

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
    void a_bucket_taken_over_is_logged_as_warn_lines_with_the_state_and_no_stack() throws Exception {
        store.append("lost-1", ExpectedVersion.any(), EventData.json("E", "{}"));
        Set<Integer> lost = ConcurrentHashMap.newKeySet();
        List<Throwable> died = new CopyOnWriteArrayList<>();
        List<String> handled = new CopyOnWriteArrayList<>();
        ShardedSubscription worker = ShardedSubscription.builder(store, "lossy", Target.category("lost"))
                .shards(1).leaseTtl(Duration.ofSeconds(3)).renewInterval(Duration.ofSeconds(1))
                .listener(new ShardListener() {
                    @Override
                    public void lost(String workerId, int bucket) {
                        lost.add(bucket);
                    }

                    @Override
                    public void readerDied(String workerId, int bucket, Throwable cause) {
                        died.add(cause);
                    }
                })
                .start(d -> {
                    handled.add(d.event().streamName());
                    return Ack.ok();
                });
        List<String> lines;
        try {
            await().atMost(WAIT).until(() -> handled.size() == 1 && worker.ownedBuckets().equals(Set.of(0)));
            lines = LogCapture.lines(() -> {
                // another worker takes the bucket over (as after a pause longer than the lease)
                try (Connection c = POSTGRES.dataSource().getConnection();
                        PreparedStatement p = c.prepareStatement("UPDATE waymark.shards SET owner = 'w-thief',"
                                + " epoch = epoch + 1, lease_expires_at = now() + interval '1 hour'"
                                + " WHERE subscription = 'lossy'")) {
                    p.executeUpdate();
                }
                store.append("lost-1", ExpectedVersion.any(), EventData.json("E", "{}")); // a write to refuse
                await().atMost(WAIT).until(() -> lost.contains(0) && !died.isEmpty());
            });
        } finally {
            worker.stop(Duration.ofSeconds(5));
        }
        assertThat(died).first().isInstanceOf(LeaseLostException.class);
        // before: "ERROR ... stopped on an error" with the LeaseLostException's stack trace
        assertThat(lines).noneMatch(l -> l.contains(" ERROR "));
        assertThat(lines).noneMatch(l -> l.startsWith("\tat ") || l.startsWith("dev.waymark"));
        String id = worker.workerId();
        assertThat(lines).filteredOn(l -> l.contains(" WARN ") && l.contains("checkpoint not written"))
                .singleElement().satisfies(l -> assertThat(l).contains("sharded pool 'lossy'", "bucket 0",
                        "worker " + id, "epoch 1 -> 2", "now held by w-thief"));
        assertThat(lines).filteredOn(l -> l.contains(" WARN ") && l.contains("lost bucket 0"))
                .singleElement().satisfies(l -> assertThat(l).contains(id, "'lossy'", "held at epoch 1",
                        "now held by w-thief at epoch 2"));
    }

    @Test
    void an_unexpected_failure_keeps_its_error_line_and_stack() throws Exception {
        store.append("odd-1", ExpectedVersion.any(), EventData.json("E", "{}"));
        List<String> lines = LogCapture.lines(() -> {
            Subscription s = Subscription.builder(store, "odd", Target.category("odd")).start(d -> {
                throw new OutOfMemoryError("not the event's fault");
            });
            assertThat(s.awaitTermination(WAIT)).isTrue();
        });
        assertThat(lines).anyMatch(l -> l.contains(" ERROR ") && l.contains("subscription odd stopped on an error"));
        assertThat(lines).anyMatch(l -> l.startsWith("\tat "));
    }
}
