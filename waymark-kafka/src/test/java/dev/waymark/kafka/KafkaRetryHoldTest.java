package dev.waymark.kafka;

import static dev.waymark.kafka.TestKafka.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.kafka.KafkaSourceEvent.Kind;
import dev.waymark.messaging.AckDecision;
import dev.waymark.messaging.Concurrency;
import dev.waymark.messaging.ProcessingApp;
import dev.waymark.messaging.ProcessorState;
import dev.waymark.testkit.KafkaExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Retries redelivered from memory on a real broker: order per partition (serial) and per key
 * (orderedByKey) with 1% and 10% of records retried, nothing committed past an unfinished record,
 * the memory budget's fallback to seeking back, and a member killed with SIGKILL during retries.
 */
class KafkaRetryHoldTest {

    @RegisterExtension
    static final KafkaExtension KAFKA = new KafkaExtension();

    private static final int PARTITIONS = 4;
    private static final int RECORDS = 4_000;
    private static final int KEYS = 40;

    private final TestKafka kafka = new TestKafka(KAFKA);

    /** Whether the record at {@code partition}/{@code offset} is retried (once), for {@code percent}% of records. */
    static boolean retried(int partition, long offset, int percent) {
        return new SplittableRandom(partition * 1_000_003L + offset).nextInt(100) < percent;
    }

    /** What one run saw. */
    private record Run(Map<String, List<Long>> seen, Map<Integer, List<String>> keysByPartition,
            List<String> committedPastUnfinished, List<String> handledAheadOfUnfinished, RecordingListener events,
            int retries) {}

    /**
     * Handles {@code RECORDS} records over {@code PARTITIONS} partitions, retrying {@code percent}%
     * once (every other one with a 5 ms delay), until all is committed. {@code seen} lists the
     * offsets handed to the handler per partition (serial) or per partition and key (orderedByKey).
     */
    private Run run(String name, Concurrency concurrency, int percent, KafkaSourceConfigBuilder extra,
            String topic, String group) throws Exception {
        boolean byKey = concurrency instanceof Concurrency.OrderedByKey;
        // The records as produced, per partition: the key of each offset; and each lane's offsets in order.
        Map<Integer, List<String>> keys = new HashMap<>();
        for (var r : kafka.readAll(topic, RECORDS)) {
            keys.computeIfAbsent(r.partition(), p -> new ArrayList<>()).add(new String(r.key()));
        }
        Map<String, List<Long>> laneOffsets = new HashMap<>();
        keys.forEach((partition, partitionKeys) -> {
            for (int o = 0; o < partitionKeys.size(); o++) {
                laneOffsets.computeIfAbsent(byKey ? partition + "/" + partitionKeys.get(o) : "" + partition,
                        k -> new ArrayList<>()).add((long) o);
            }
        });
        Map<String, Integer> laneDone = new ConcurrentHashMap<>(); // index of the lane's first unfinished offset
        List<String> ahead = new CopyOnWriteArrayList<>();
        Map<String, List<Long>> seen = new ConcurrentHashMap<>();
        Set<String> ok = ConcurrentHashMap.newKeySet();
        List<String> violations = new CopyOnWriteArrayList<>();
        Map<Integer, Long> verified = new HashMap<>();
        RecordingListener events = new RecordingListener();
        KafkaSourceListener commitCheck = e -> {
            if (e.kind() != Kind.COMMITTED) {
                return;
            }
            // On the consumer thread, after the commit: every offset below it must have been handled with ok.
            for (long o = verified.getOrDefault(e.partition(), 0L); o < e.value(); o++) {
                if (!ok.contains(e.partition() + ":" + o)) {
                    violations.add(e.partition() + ":" + o + " (committed " + e.value() + ")");
                }
            }
            verified.merge(e.partition(), e.value(), Math::max);
        };
        KafkaSource source = KafkaSource.of(extra.listener(events).listener(commitCheck).name(name).build());
        ProcessingApp app = ProcessingApp.builder().processor("p", source, concurrency, m -> {
            KafkaCoordinates at = KafkaCoordinates.of(m.envelope());
            String lane = byKey ? at.partition() + "/" + new String(m.envelope().key().bytes()) : "" + at.partition();
            seen.computeIfAbsent(lane, k -> Collections.synchronizedList(new ArrayList<>())).add(at.offset());
            // A lane's records run one at a time: nothing may be handled past its first unfinished record
            // (a redelivery of a finished one, after a seek, is allowed).
            List<Long> offsets = laneOffsets.get(lane);
            int done = laneDone.getOrDefault(lane, 0);
            if (done < offsets.size() && at.offset() > offsets.get(done)) {
                ahead.add(lane + ": " + at.offset() + " before " + offsets.get(done));
            }
            if (byKey) {
                LockSupport.parkNanos(50_000); // a little work, so keys really run side by side
            }
            if (m.envelope().attempt() == 0 && retried(at.partition(), at.offset(), percent)) {
                return AckDecision.retry(at.offset() % 2 == 0 ? Duration.ZERO : Duration.ofMillis(5));
            }
            ok.add(at.partition() + ":" + at.offset());
            while (done < offsets.size() && ok.contains(at.partition() + ":" + offsets.get(done))) {
                done++;
            }
            laneDone.put(lane, done);
            return AckDecision.ok();
        }).build().start();
        try {
            await().atMost(Duration.ofSeconds(60)).until(() -> kafka.fullyCommitted(group, topic, PARTITIONS));
            assertThat(app.snapshot().get("p").lifecycle()).isEqualTo(ProcessorState.Lifecycle.RUNNING);
        } finally {
            app.stop();
        }
        int retries = 0;
        for (var e : keys.entrySet()) {
            for (long o = 0; o < e.getValue().size(); o++) {
                retries += retried(e.getKey(), o, percent) ? 1 : 0;
            }
        }
        return new Run(seen, keys, violations, ahead, events, retries);
    }

    /** The offsets each lane should see: every offset in order, a retried one twice in a row. */
    private static Map<String, List<Long>> expected(Map<Integer, List<String>> keys, int percent, boolean byKey) {
        Map<String, List<Long>> out = new HashMap<>();
        keys.forEach((partition, partitionKeys) -> {
            for (int o = 0; o < partitionKeys.size(); o++) {
                String lane = byKey ? partition + "/" + partitionKeys.get(o) : "" + partition;
                List<Long> list = out.computeIfAbsent(lane, k -> new ArrayList<>());
                list.add((long) o);
                if (retried(partition, o, percent)) {
                    list.add((long) o);
                }
            }
        });
        return out;
    }

    private void ordered(String name, Concurrency concurrency, int percent) throws Exception {
        String topic = KAFKA.createTopic(name, PARTITIONS);
        kafka.produce(topic, -1, RECORDS, KEYS);
        String group = kafka.group();
        Run run = run(name, concurrency, percent, kafka.config(group, topic), topic, group);
        boolean byKey = concurrency instanceof Concurrency.OrderedByKey;
        assertThat(run.seen()).as("each record once, a retried one again right after, in order")
                .isEqualTo(expected(run.keysByPartition(), percent, byKey));
        assertThat(run.committedPastUnfinished()).isEmpty();
        assertThat(run.handledAheadOfUnfinished()).isEmpty();
        assertThat(run.retries()).isPositive();
        assertThat(run.events().count(Kind.RETRY_HELD)).as("every retry held in memory").isEqualTo(run.retries());
        assertThat(run.events().count(Kind.SEEK)).as("no seek, no refetch").isZero();
        assertThat(run.events().count(Kind.SEEK_FALLBACK)).isZero();
    }

    @Test
    void serial_with_one_percent_retried_keeps_each_partition_in_order_without_a_seek() throws Exception {
        ordered("hold-serial-1", Concurrency.serial(), 1);
    }

    @Test
    void serial_with_ten_percent_retried_keeps_each_partition_in_order_without_a_seek() throws Exception {
        ordered("hold-serial-10", Concurrency.serial(), 10);
    }

    @Test
    void ordered_by_key_with_one_percent_retried_keeps_each_key_in_order_without_a_seek() throws Exception {
        ordered("hold-keyed-1", Concurrency.orderedByKey(16), 1);
    }

    @Test
    void ordered_by_key_with_ten_percent_retried_keeps_each_key_in_order_without_a_seek() throws Exception {
        ordered("hold-keyed-10", Concurrency.orderedByKey(16), 10);
    }

    @Test
    void past_the_memory_budget_the_partition_is_sought_back_and_stays_in_order() throws Exception {
        String name = "hold-budget";
        String topic = KAFKA.createTopic(name, PARTITIONS);
        kafka.produce(topic, -1, RECORDS, KEYS);
        String group = kafka.group();
        // About 14 records of these fit (key and value bytes + 128 each): a 5 ms delay fills it.
        Run run = run(name, Concurrency.serial(), 10, kafka.config(group, topic).retryHoldBytes(2_000)
                .maxPollRecords(100), topic, group);
        assertThat(run.seen()).as("in order through the fallback")
                .isEqualTo(expected(run.keysByPartition(), 10, false));
        assertThat(run.committedPastUnfinished()).isEmpty();
        assertThat(run.handledAheadOfUnfinished()).isEmpty();
        assertThat(run.events().count(Kind.SEEK_FALLBACK)).as("the budget was reached").isPositive();
        assertThat(run.events().count(Kind.SEEK)).isPositive();
    }

    @Test
    void ordered_by_key_past_the_memory_budget_keys_stay_in_order_and_nothing_is_committed_past_a_retry()
            throws Exception {
        String name = "hold-budget-keyed";
        String topic = KAFKA.createTopic(name, PARTITIONS);
        kafka.produce(topic, -1, RECORDS, KEYS);
        String group = kafka.group();
        // A seek back redelivers records of other keys already handled (at least once): each key's
        // records are still handled in order, none past its first unfinished one.
        Run run = run(name, Concurrency.orderedByKey(16), 10, kafka.config(group, topic).retryHoldBytes(2_000)
                .maxPollRecords(100), topic, group);
        assertThat(run.handledAheadOfUnfinished()).isEmpty();
        assertThat(run.committedPastUnfinished()).isEmpty();
        assertThat(run.events().count(Kind.SEEK_FALLBACK)).as("the budget was reached").isPositive();
        run.seen().forEach((lane, offsets) -> assertThat(offsets).as(lane).containsAll(
                expected(run.keysByPartition(), 0, true).get(lane)));
    }

    @Test
    void a_member_killed_with_sigkill_during_retries_loses_nothing_and_the_survivor_commits_everything()
            throws Exception {
        String topic = KAFKA.createTopic("hold-crash", PARTITIONS);
        kafka.produce(topic, -1, 3_000, KEYS);
        String group = kafka.group();
        Set<String> handledBySurvivor = ConcurrentHashMap.newKeySet();
        RecordingListener events = new RecordingListener();
        ProcessingApp survivor = null;
        try (ChildMember child = ChildMember.start(KAFKA.bootstrapServers(), group, topic, 10)) {
            await().atMost(WAIT).until(() -> child.handled.size() >= 300);
            survivor = ProcessingApp.builder().processor("survivor",
                    KafkaSource.of(kafka.config(group, topic).listener(events).build()), Concurrency.orderedByKey(8),
                    m -> {
                        LockSupport.parkNanos(200_000);
                        KafkaCoordinates at = KafkaCoordinates.of(m.envelope());
                        if (m.envelope().attempt() == 0 && retried(at.partition(), at.offset(), 10)) {
                            return AckDecision.retry(Duration.ofMillis(20));
                        }
                        handledBySurvivor.add(m.id());
                        return AckDecision.ok();
                    }).build().start();
            // The group rebalanced onto both, and the survivor holds retries.
            await().atMost(WAIT).until(() -> !handledBySurvivor.isEmpty() && events.count(Kind.RETRY_HELD) > 0);
            child.kill(); // SIGKILL: no commit, no LeaveGroup, its held retries gone with it
            kafka.produce(topic, -1, 1_000, KEYS);

            ProcessingApp app = survivor;
            await().atMost(Duration.ofSeconds(90)).until(() -> kafka.fullyCommitted(group, topic, PARTITIONS));
            Set<String> all = ConcurrentHashMap.newKeySet();
            all.addAll(child.handled);
            all.addAll(handledBySurvivor);
            assertThat(all).as("every record handled with ok by one member or the other").hasSize(4_000);
            assertThat(app.snapshot().get("survivor").lifecycle()).isEqualTo(ProcessorState.Lifecycle.RUNNING);
            assertThat(child.handled).isNotEmpty().hasSizeLessThan(4_000);
            assertThat(events.count(Kind.ASSIGNED)).as("the survivor took the killed member's partitions over")
                    .isGreaterThan(1);
        } finally {
            if (survivor != null) {
                survivor.stop();
            }
        }
    }
}
