package dev.waymark.kafka.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.waymark.kafka.KafkaSourceEvent;
import dev.waymark.kafka.KafkaSourceEvent.Kind;
import dev.waymark.kafka.KafkaSourceListener;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The acknowledgement state machine without a broker: fetched records are real
 * {@code ConsumerRecord}s, seeks are recorded instead of applied. Checklist 18-20, 22-25, 27. No
 * retry hold (a budget of 0): every retry seeks back, as it does past the budget.
 */
class AckLedgerTest {

    private static final TopicPartition TP = new TopicPartition("orders", 0);

    private final List<KafkaSourceEvent> events = new CopyOnWriteArrayList<>();
    private final List<Long> seeks = new ArrayList<>();
    private AckLedger ledger;

    @BeforeEach
    void setUp() {
        ledger = new AckLedger(1_000, 0, new Events("test", List.of(events::add)), () -> {});
        ledger.assign(List.of(TP));
    }

    private void fetch(long from, long toInclusive) {
        List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
        for (long o = from; o <= toInclusive; o++) {
            records.add(new ConsumerRecord<>(TP.topic(), TP.partition(), o, null, new byte[]{(byte) o}));
        }
        ledger.accept(new ConsumerRecords<>(Map.of(TP, records), Map.of()));
    }

    private AckLedger.Handout take() throws InterruptedException {
        return ledger.next(Duration.ZERO);
    }

    private Delivery takeOffset(long expected) throws InterruptedException {
        AckLedger.Handout h = take();
        assertThat(h).as("a record at %d", expected).isNotNull();
        assertThat(h.delivery().offset).isEqualTo(expected);
        return h.delivery();
    }

    private void applySeeks() {
        seeks.addAll(ledger.takeSeeks().values());
    }

    private long committable() {
        OffsetAndMetadata om = ledger.committable().get(TP);
        return om == null ? -1 : om.offset();
    }

    @Test
    void a_stale_successor_ack_after_a_retry_commits_nothing_and_the_replay_commits_only_the_retried_record()
            throws Exception {
        fetch(42, 43);
        Delivery d42 = takeOffset(42);
        Delivery d43 = takeOffset(43);
        assertThat(ledger.retry(d42, Duration.ZERO)).isTrue();
        assertThat(ledger.ack(d43)).as("stale successor").isFalse();
        applySeeks();
        assertThat(seeks).containsExactly(42L);
        assertThat(committable()).isEqualTo(-1);
        fetch(42, 43);
        Delivery replay = takeOffset(42);
        assertThat(ledger.ack(replay)).isTrue();
        assertThat(committable()).isEqualTo(43); // only 42 is committed; 43 comes again
        takeOffset(43);
    }

    @Test
    void the_earliest_retry_wins_and_a_later_retry_is_superseded() throws Exception {
        fetch(42, 43);
        Delivery d42 = takeOffset(42);
        Delivery d43 = takeOffset(43);
        assertThat(ledger.retry(d42, Duration.ZERO)).isTrue();
        assertThat(ledger.retry(d43, Duration.ZERO)).isFalse();
        assertThat(ledger.ack(d43)).isFalse();
        applySeeks();
        assertThat(seeks).containsExactly(42L);
        assertThat(committable()).isEqualTo(-1);
    }

    @Test
    void a_delivery_cannot_resolve_its_own_retry_and_retrying_it_twice_seeks_once() throws Exception {
        fetch(0, 0);
        Delivery d = takeOffset(0);
        assertThat(ledger.retry(d, Duration.ZERO)).isTrue();
        assertThat(ledger.retry(d, Duration.ZERO)).isFalse();
        assertThat(ledger.ack(d)).isFalse();
        applySeeks();
        assertThat(seeks).containsExactly(0L);
        assertThat(committable()).isEqualTo(-1);
    }

    @Test
    void a_thousand_random_retry_pairs_seek_to_the_running_minimum_and_never_commit_past_an_open_retry()
            throws Exception {
        for (long seed = 400_040; seed < 401_040; seed++) {
            Random random = new Random(seed);
            setUp();
            seeks.clear();
            long base = 40 + random.nextInt(6);
            long later = base + 1 + random.nextInt(5);
            fetch(0, later + 3);
            for (long o = 0; o < base; o++) {
                ledger.ack(takeOffset(o));
            }
            List<Delivery> handed = new ArrayList<>();
            for (long o = base; o <= later; o++) {
                handed.add(takeOffset(o));
            }
            Delivery first = handed.get(0);
            Delivery last = handed.get(handed.size() - 1);
            boolean laterFirst = random.nextBoolean();
            List<Long> retried = new ArrayList<>();
            for (Delivery d : laterFirst ? List.of(last, first) : List.of(first, last)) {
                if (ledger.retry(d, Duration.ZERO)) {
                    retried.add(d.offset);
                    applySeeks();
                }
            }
            assertThat(ledger.ack(last)).as("premature ok, seed %d", seed).isFalse();
            long runningMin = Long.MAX_VALUE;
            for (int i = 0; i < seeks.size(); i++) {
                runningMin = Math.min(runningMin, retried.get(i));
                assertThat(seeks.get(i)).as("seed %d", seed).isEqualTo(runningMin);
            }
            assertThat(seeks.get(seeks.size() - 1)).isEqualTo(base);
            assertThat(committable()).as("seed %d", seed).isLessThanOrEqualTo(base);
            fetch(base, later + 3);
            for (long o = base; o <= later + 3; o++) {
                Delivery replay = takeOffset(o);
                assertThat(committable()).isLessThanOrEqualTo(o);
                assertThat(ledger.ack(replay)).isTrue();
            }
            assertThat(committable()).as("seed %d", seed).isEqualTo(later + 4);
        }
    }

    @Test
    void a_scripted_twelve_record_log_with_a_retry_at_four_commits_everything_without_a_stall() throws Exception {
        fetch(0, 11);
        List<Long> handled = new ArrayList<>();
        for (long o = 0; o < 4; o++) {
            handled.add(o);
            ledger.ack(takeOffset(o));
        }
        Delivery four = takeOffset(4);
        handled.add(4L);
        ledger.retry(four, Duration.ZERO);
        assertThat(take()).as("buffered successors are superseded").isNull();
        applySeeks();
        fetch(4, 11);
        AckLedger.Handout h;
        while ((h = take()) != null) {
            handled.add(h.delivery().offset);
            assertThat(h.attempt()).isEqualTo(h.delivery().offset == 4 ? 1 : 0);
            ledger.ack(h.delivery());
        }
        assertThat(seeks).containsExactly(4L);
        assertThat(handled).containsExactly(0L, 1L, 2L, 3L, 4L, 4L, 5L, 6L, 7L, 8L, 9L, 10L, 11L);
        assertThat(committable()).isEqualTo(12);
    }

    @Test
    void records_fetched_after_a_retry_but_before_its_seek_are_dropped() throws Exception {
        fetch(0, 3);
        Delivery zero = takeOffset(0);
        ledger.retry(zero, Duration.ZERO);
        fetch(4, 6); // the consumer thread polled once more from the old position
        applySeeks();
        assertThat(take()).isNull();
        fetch(0, 6);
        for (long o = 0; o <= 6; o++) {
            ledger.ack(takeOffset(o));
        }
        assertThat(committable()).isEqualTo(7);
    }

    @Test
    void out_of_order_acknowledgements_commit_only_the_contiguous_prefix() throws Exception {
        fetch(0, 4);
        List<Delivery> d = new ArrayList<>();
        for (long o = 0; o <= 4; o++) {
            d.add(takeOffset(o));
        }
        ledger.ack(d.get(1));
        ledger.ack(d.get(2));
        ledger.ack(d.get(4));
        assertThat(committable()).isEqualTo(-1);
        ledger.ack(d.get(0));
        assertThat(committable()).isEqualTo(3);
        ledger.ack(d.get(3));
        assertThat(committable()).isEqualTo(5);
    }

    @Test
    void a_retention_gap_clears_the_barrier_with_an_event_and_consumption_goes_on() throws Exception {
        fetch(0, 11);
        for (long o = 0; o < 4; o++) {
            ledger.ack(takeOffset(o));
        }
        ledger.retry(takeOffset(4), Duration.ZERO);
        applySeeks();
        fetch(7, 11); // 4..6 were deleted by retention
        for (long o = 7; o <= 11; o++) {
            ledger.ack(takeOffset(o));
        }
        assertThat(committable()).isEqualTo(12);
        assertThat(events).filteredOn(e -> e.kind() == Kind.RETENTION_GAP).singleElement()
                .extracting(KafkaSourceEvent::value).isEqualTo(7L);
    }

    @Test
    void after_a_revoke_an_old_handle_commits_seeks_and_halts_nothing_and_buffered_records_are_dropped()
            throws Exception {
        fetch(0, 5);
        Delivery zero = takeOffset(0);
        Delivery one = takeOffset(1);
        ledger.ack(zero);
        Map<TopicPartition, OffsetAndMetadata> onRevoke = ledger.revoke(List.of(TP));
        assertThat(onRevoke).containsEntry(TP, new OffsetAndMetadata(1));
        assertThat(ledger.ack(one)).isFalse();
        assertThat(ledger.retry(one, Duration.ZERO)).isFalse();
        assertThat(ledger.halt(one)).isFalse();
        applySeeks();
        assertThat(seeks).isEmpty();
        ledger.assign(List.of(TP)); // the same partition comes back: a new generation
        assertThat(take()).as("records buffered before the revoke").isNull();
        assertThat(ledger.ack(one)).isFalse();
        assertThat(committable()).isEqualTo(-1);
        fetch(1, 2);
        ledger.ack(takeOffset(1));
        assertThat(committable()).isEqualTo(2);
    }

    @Test
    void a_halt_stops_commits_at_the_halted_record_pauses_and_resumes_from_it() throws Exception {
        fetch(0, 3);
        Delivery zero = takeOffset(0);
        Delivery one = takeOffset(1);
        Delivery two = takeOffset(2);
        ledger.ack(zero);
        assertThat(ledger.halt(one)).isTrue();
        ledger.ack(two);
        assertThat(committable()).isEqualTo(1);
        assertThat(ledger.pausedWanted(System.nanoTime(), false)).containsExactly(TP);
        assertThat(take()).as("a halted partition hands out nothing").isNull();
        assertThat(ledger.halted()).containsEntry(TP, 1L);
        assertThat(ledger.resumeHalted(TP)).isTrue();
        applySeeks();
        assertThat(seeks).containsExactly(1L);
        assertThat(ledger.pausedWanted(System.nanoTime(), false)).isEmpty();
        fetch(1, 3);
        for (long o = 1; o <= 3; o++) {
            ledger.ack(takeOffset(o));
        }
        assertThat(committable()).isEqualTo(4);
    }

    @Test
    void a_retry_delay_pauses_only_its_partition_until_it_ends() throws Exception {
        TopicPartition other = new TopicPartition("orders", 1);
        ledger.assign(List.of(other));
        fetch(0, 0);
        ledger.retry(takeOffset(0), Duration.ofSeconds(30));
        long now = System.nanoTime();
        assertThat(ledger.pausedWanted(now, false)).containsExactly(TP);
        assertThat(ledger.nanosUntilRetryResume(now, Long.MAX_VALUE)).isPositive();
        assertThat(ledger.pausedWanted(now + Duration.ofSeconds(31).toNanos(), false)).isEmpty();
    }

    @Test
    void a_full_buffer_pauses_fetching_until_it_drains_to_half() throws Exception {
        ledger = new AckLedger(10, 0, new Events("test", List.of()), () -> {});
        ledger.assign(List.of(TP));
        fetch(0, 9);
        assertThat(ledger.pausedWanted(System.nanoTime(), false)).containsExactly(TP);
        for (long o = 0; o < 5; o++) {
            takeOffset(o);
        }
        assertThat(ledger.pausedWanted(System.nanoTime(), false)).isEmpty();
    }

    @Test
    void listeners_are_called_with_the_lock_released_so_one_waiting_for_another_ledger_call_cannot_deadlock()
            throws Exception {
        // A listener that hands work to another thread and waits for it (a metrics exporter, a test
        // latch), where that thread asks the ledger something. Before: every event was emitted under
        // the ledger's lock, so the other thread blocked on it until the listener gave up.
        AtomicReference<AckLedger> self = new AtomicReference<>();
        List<String> blocked = new CopyOnWriteArrayList<>();
        List<KafkaSourceEvent.Kind> seen = new CopyOnWriteArrayList<>();
        KafkaSourceListener waitsForAnotherThread = event -> {
            seen.add(event.kind());
            Thread other = Thread.ofPlatform().start(() -> self.get().outstanding());
            try {
                other.join(Duration.ofSeconds(5));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (other.isAlive()) {
                blocked.add(event.kind() + ": the other thread waited for the ledger's lock");
            }
        };
        AckLedger l = new AckLedger(1_000, 1L << 20, new Events("test", List.of(waitsForAnotherThread)), () -> {});
        self.set(l);
        l.assign(List.of(TP)); // ASSIGNED, on the consumer thread
        l.accept(new ConsumerRecords<>(Map.of(TP, List.of(
                new ConsumerRecord<>(TP.topic(), TP.partition(), 0L, null, new byte[]{0}),
                new ConsumerRecord<>(TP.topic(), TP.partition(), 1L, null, new byte[]{1}))), Map.of()));
        Delivery zero = l.next(Duration.ZERO).delivery();
        assertThat(l.retry(zero, Duration.ofSeconds(30))).isFalse(); // RETRY_HELD, on a processor thread
        assertThat(l.next(Duration.ZERO)).as("offset 1 joins the held lane").isNull();
        l.committed(Map.of(TP, new OffsetAndMetadata(0))); // COMMITTED, on the consumer thread
        l.revoke(List.of(TP));
        l.assign(List.of(TP));
        l.accept(new ConsumerRecords<>(Map.of(TP, List.of(
                new ConsumerRecord<>(TP.topic(), TP.partition(), 0L, null, new byte[]{0}))), Map.of()));
        assertThat(l.halt(l.next(Duration.ZERO).delivery())).isTrue(); // HALTED, on a processor thread
        assertThat(seen).contains(Kind.ASSIGNED, Kind.RETRY_HELD, Kind.COMMITTED, Kind.HALTED);
        assertThat(blocked).isEmpty();
    }
}
