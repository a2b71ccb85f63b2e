package dev.waymark.kafka.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.waymark.kafka.KafkaOrdering;
import dev.waymark.kafka.KafkaSourceEvent;
import dev.waymark.kafka.KafkaSourceEvent.Kind;
import dev.waymark.messaging.Concurrency;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/**
 * Retries held in memory without a broker: no seek, the retried record first, what its processor
 * orders after it behind it, the commit never past it, the budget's fallback to a seek.
 */
class AckLedgerHoldTest {

    private static final TopicPartition TP = new TopicPartition("orders", 0);
    private static final TopicPartition OTHER = new TopicPartition("orders", 1);

    private final List<KafkaSourceEvent> events = new CopyOnWriteArrayList<>();
    private AckLedger ledger = ledger(1 << 20);

    private AckLedger ledger(long budget) {
        AckLedger l = new AckLedger(1_000, budget, new Events("test", List.of(events::add)), () -> {});
        l.assign(List.of(TP, OTHER));
        return l;
    }

    /** Records {@code from..toInclusive} of {@code tp}, key {@code k<offset % keys>}, 10-byte values. */
    private void fetch(TopicPartition tp, long from, long toInclusive, int keys) {
        List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
        for (long o = from; o <= toInclusive; o++) {
            records.add(new ConsumerRecord<>(tp.topic(), tp.partition(), o,
                    ("k" + o % keys).getBytes(StandardCharsets.UTF_8), new byte[10]));
        }
        ledger.accept(new ConsumerRecords<>(Map.of(tp, records), Map.of()));
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

    private long committable(TopicPartition tp) {
        OffsetAndMetadata om = ledger.committable().get(tp);
        return om == null ? -1 : om.offset();
    }

    @Test
    void a_serial_retry_is_redelivered_from_memory_first_with_its_successors_after_it_and_no_seek()
            throws Exception {
        fetch(TP, 0, 5, 1);
        ledger.ack(takeOffset(0));
        Delivery one = takeOffset(1);
        Delivery two = takeOffset(2); // handed out after 1: superseded by its retry, held behind it
        assertThat(ledger.retry(one, Duration.ZERO)).as("no work for the consumer thread").isFalse();
        assertThat(ledger.ack(two)).as("superseded").isFalse();
        assertThat(ledger.takeSeeks()).isEmpty();
        AckLedger.Handout replay = take();
        assertThat(replay.delivery().offset).isEqualTo(1);
        assertThat(replay.attempt()).isEqualTo(1);
        assertThat(committable(TP)).as("nothing past the retried record").isEqualTo(1);
        ledger.ack(replay.delivery());
        for (long o = 2; o <= 5; o++) {
            ledger.ack(takeOffset(o));
        }
        assertThat(take()).isNull();
        assertThat(committable(TP)).isEqualTo(6);
        assertThat(events).extracting(KafkaSourceEvent::kind).contains(Kind.RETRY_HELD)
                .doesNotContain(Kind.SEEK_FALLBACK);
        assertThat(ledger.heldRecords()).isZero();
    }

    @Test
    void a_retry_delay_holds_its_partition_in_memory_while_other_partitions_go_on_unpaused() throws Exception {
        fetch(TP, 0, 3, 1);
        fetch(OTHER, 0, 3, 1);
        Delivery zero = takeOffset(0);
        assertThat(zero.partition).isEqualTo(TP);
        ledger.retry(zero, Duration.ofSeconds(30));
        List<String> handed = new ArrayList<>();
        for (AckLedger.Handout h; (h = take()) != null;) {
            handed.add(h.delivery().partition.partition() + ":" + h.delivery().offset);
            ledger.ack(h.delivery());
        }
        assertThat(handed).containsExactly("1:0", "1:1", "1:2", "1:3");
        assertThat(ledger.heldRecords()).isEqualTo(4);
        assertThat(ledger.pausedWanted(System.nanoTime(), false)).as("no pause for a held retry").isEmpty();
        assertThat(committable(TP)).isEqualTo(-1);
        assertThat(committable(OTHER)).isEqualTo(4);
    }

    @Test
    void ordered_by_key_only_the_retried_key_waits_and_the_commit_stays_at_the_contiguous_prefix()
            throws Exception {
        ledger.laneKeys(LaneKeys.of(Concurrency.orderedByKey(4), KafkaOrdering.KEY));
        fetch(TP, 0, 7, 2); // keys k0 k1 k0 k1 ...
        Delivery zero = takeOffset(0);
        Delivery one = takeOffset(1);
        Delivery two = takeOffset(2); // k0 after the retried one: held behind it
        ledger.retry(zero, Duration.ofSeconds(30));
        assertThat(ledger.ack(two)).isFalse();
        ledger.ack(one);
        List<Long> handed = new ArrayList<>();
        for (AckLedger.Handout h; (h = take()) != null;) {
            handed.add(h.delivery().offset);
            ledger.ack(h.delivery());
        }
        assertThat(handed).as("k1 goes on").containsExactly(3L, 5L, 7L);
        assertThat(committable(TP)).as("nothing past the held offset 0").isEqualTo(-1);
        assertThat(ledger.heldRecords()).as("0, 2, 4, 6").isEqualTo(4);
    }

    @Test
    void unordered_holds_only_the_retried_record() throws Exception {
        ledger.laneKeys(LaneKeys.of(Concurrency.unordered(4), KafkaOrdering.KEY));
        fetch(TP, 0, 3, 1);
        Delivery zero = takeOffset(0);
        ledger.retry(zero, Duration.ofSeconds(30));
        for (long o = 1; o <= 3; o++) {
            ledger.ack(takeOffset(o));
        }
        assertThat(ledger.heldRecords()).isOne();
        assertThat(committable(TP)).isEqualTo(-1);
    }

    @Test
    void past_the_budget_a_fetched_record_is_sought_back_to_and_the_partition_pauses_until_it_holds_nothing()
            throws Exception {
        long perRecord = RetryHold.RECORD_OVERHEAD_BYTES + 2 + 10;
        ledger = ledger(3 * perRecord);
        fetch(TP, 0, 9, 1);
        ledger.retry(takeOffset(0), Duration.ZERO);
        // 0 is ready at once, and 1 and 2 join it from the buffer; 3 does not fit: seek back to 3
        AckLedger.Handout replay = take();
        assertThat(replay.delivery().offset).isZero();
        ledger.retry(replay.delivery(), Duration.ofSeconds(30)); // again, now with a delay
        assertThat(take()).as("1 and 2 held, 3 on dropped").isNull();
        assertThat(events).extracting(KafkaSourceEvent::kind).contains(Kind.SEEK_FALLBACK);
        assertThat(ledger.takeSeeks()).containsEntry(TP, 3L);
        assertThat(ledger.pausedWanted(System.nanoTime(), false)).containsExactly(TP);
        assertThat(committable(TP)).isEqualTo(-1);
        assertThat(ledger.heldRecords()).isEqualTo(3);
    }

    @Test
    void past_the_budget_a_retry_seeks_back_as_before() throws Exception {
        ledger = ledger(0);
        fetch(TP, 0, 2, 1);
        assertThat(ledger.retry(takeOffset(0), Duration.ZERO)).isTrue();
        assertThat(ledger.takeSeeks()).containsEntry(TP, 0L);
        assertThat(events).extracting(KafkaSourceEvent::kind).contains(Kind.SEEK_FALLBACK)
                .doesNotContain(Kind.RETRY_HELD);
    }

    @Test
    void a_revoke_drops_what_is_held_and_an_old_handle_does_nothing() throws Exception {
        fetch(TP, 0, 2, 1);
        Delivery zero = takeOffset(0);
        ledger.retry(zero, Duration.ofSeconds(30));
        ledger.revoke(List.of(TP));
        assertThat(ledger.heldRecords()).isZero();
        ledger.assign(List.of(TP));
        assertThat(take()).isNull();
        assertThat(ledger.retry(zero, Duration.ZERO)).isFalse();
        assertThat(ledger.heldRecords()).isZero();
    }

    @Test
    void a_halted_partition_hands_nothing_held_out_and_a_resume_redelivers_the_held_retry_first()
            throws Exception {
        ledger.laneKeys(LaneKeys.of(Concurrency.orderedByKey(4), KafkaOrdering.KEY));
        fetch(TP, 0, 3, 2);
        Delivery zero = takeOffset(0);
        Delivery one = takeOffset(1);
        ledger.retry(zero, Duration.ZERO);
        ledger.halt(one);
        assertThat(take()).as("halted").isNull();
        assertThat(ledger.resumeHalted(TP)).isTrue();
        assertThat(ledger.takeSeeks()).containsEntry(TP, 1L);
        AckLedger.Handout replay = take();
        assertThat(replay.delivery().offset).as("held, before the halted record").isZero();
        assertThat(replay.attempt()).isOne();
        assertThat(committable(TP)).isEqualTo(-1);
    }
}
