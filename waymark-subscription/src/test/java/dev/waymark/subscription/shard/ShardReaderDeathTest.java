package dev.waymark.subscription.shard;

import static dev.waymark.testkit.Waits.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.store.EventData;
import dev.waymark.store.EventStore;
import dev.waymark.store.ExpectedVersion;
import dev.waymark.subscription.Ack;
import dev.waymark.subscription.Target;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A bucket's real reader (a subscription) dying on its own: reported as it dies, restarted by the next pass. */
class ShardReaderDeathTest {

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
    void a_reader_that_dies_is_reported_at_once_with_its_cause_then_restarted_and_its_event_redelivered() {
        for (int v = 0; v < 2; v++) {
            for (int s = 0; s < 4; s++) {
                store.append("mortal-" + s, ExpectedVersion.any(), EventData.json("E", "{}"));
            }
        }
        UUID fatal = store.readStreamForward("mortal-1", 0, 1).get(0).eventId();
        int fatalBucket = dev.waymark.store.Partition.of(0, 2).owns("mortal-1") ? 0 : 1;
        AtomicInteger thrown = new AtomicInteger();
        Set<UUID> handled = ConcurrentHashMap.newKeySet();
        List<String> heard = new CopyOnWriteArrayList<>();
        List<Throwable> causes = new CopyOnWriteArrayList<>();
        ShardListener listener = new ShardListener() {
            @Override
            public void readerDied(String workerId, int bucket, Throwable cause) {
                heard.add("died " + bucket);
                causes.add(cause);
            }

            @Override
            public void readerRestarted(String workerId, int bucket, Throwable cause) {
                heard.add("restarted " + bucket);
                causes.add(cause);
            }
        };
        ShardedSubscription worker = ShardedSubscription.builder(store, "mortals", Target.category("mortal"))
                .shards(2).leaseTtl(Duration.ofSeconds(15)).renewInterval(Duration.ofMillis(300))
                .listener(listener)
                .start(d -> {
                    if (d.event().eventId().equals(fatal) && thrown.getAndIncrement() == 0) {
                        // not the event's fault (a VirtualMachineError): the reader's subscription ends on it
                        throw new OutOfMemoryError("injected");
                    }
                    handled.add(d.event().eventId());
                    return Ack.ok();
                });
        try {
            // the restart is reported after the new reader starts, which may handle the rest first
            await().atMost(WAIT).until(() -> handled.size() == 8 && heard.size() >= 2);
            // before: nothing was reported as the reader died; the next pass only said it restarted it
            assertThat(heard).containsExactly("died " + fatalBucket, "restarted " + fatalBucket);
            assertThat(causes)
                    .allSatisfy(c -> assertThat(c).isInstanceOf(OutOfMemoryError.class).hasMessage("injected"));
            assertThat(worker.stats().readerRestarts()).isOne();
            assertThat(thrown).hasValue(2); // delivered again by the restarted reader, not acknowledged by the dead one
        } finally {
            worker.stop(Duration.ofSeconds(5));
        }
        assertThat(heard).as("a stop is not a death").hasSize(2);
    }
}
