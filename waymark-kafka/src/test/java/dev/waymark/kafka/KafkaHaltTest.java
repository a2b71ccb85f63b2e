package dev.waymark.kafka;

import static dev.waymark.kafka.TestKafka.WAIT;
import static dev.waymark.kafka.TestKafka.offset;
import static dev.waymark.kafka.TestKafka.take;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.kafka.KafkaSourceEvent.Kind;
import dev.waymark.messaging.AckDecision;
import dev.waymark.messaging.Concurrency;
import dev.waymark.messaging.Ingested;
import dev.waymark.messaging.ProcessingApp;
import dev.waymark.messaging.ProcessorState;
import dev.waymark.testkit.KafkaExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Halt on Kafka: checklist 37. */
class KafkaHaltTest {

    @RegisterExtension
    static final KafkaExtension KAFKA = new KafkaExtension();

    private final TestKafka kafka = new TestKafka(KAFKA);

    @Test
    void a_halt_pauses_the_partition_commits_nothing_past_it_keeps_membership_and_a_restart_resumes_there()
            throws Exception {
        String topic = KAFKA.createTopic("halt", 1);
        kafka.produce(topic, 0, 10, 1);
        String group = kafka.group();
        RecordingListener events = new RecordingListener();
        // A short max.poll.interval: if the halted consumer stopped polling it would be evicted within 3 s.
        KafkaSource source = KafkaSource.of(kafka.config(group, topic).listener(events)
                .consumerProperty(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, "3000").build());
        List<Long> seen = new CopyOnWriteArrayList<>();
        ProcessingApp app = ProcessingApp.builder().processor("p", source, Concurrency.serial(), m -> {
            long offset = KafkaCoordinates.of(m.envelope()).offset();
            seen.add(offset);
            return offset == 3 ? AckDecision.halt("operator must look at 3") : AckDecision.ok();
        }).build().start();
        try {
            await().atMost(WAIT).until(() -> app.snapshot().get("p").lifecycle() == ProcessorState.Lifecycle.HALTED);
            await().atMost(WAIT).until(() -> events.of(Kind.PAUSED).stream().anyMatch(e -> e.partition() == 0));
            await().atMost(WAIT).until(() -> kafka.committed(group, topic).getOrDefault(0, -1L) == 3L);
            assertThat(source.halted()).containsEntry(topic + "-0", 3L);
            // Membership is kept while halted: the consumer thread keeps polling (the partition is paused),
            // so for longer than max.poll.interval the member is neither evicted nor back under a new id.
            Set<String> member = memberIds(group);
            assertThat(member).hasSize(1);
            await().during(Duration.ofSeconds(4)).atMost(WAIT).until(() -> memberIds(group).equals(member));
            assertThat(events.of(Kind.REVOKED)).isEmpty();
            assertThat(events.of(Kind.LOST)).isEmpty();
            assertThat(kafka.committed(group, topic)).containsEntry(0, 3L);
            assertThat(seen).containsExactly(0L, 1L, 2L, 3L);
        } finally {
            app.stop();
            source.close();
        }
        assertThat(kafka.committed(group, topic)).as("nothing past the halted record").containsEntry(0, 3L);
        try (KafkaSource next = KafkaSource.of(kafka.config(group, topic).build())) {
            assertThat(offset(take(next))).as("the halted record comes first after a restart").isEqualTo(3);
        }
    }

    private Set<String> memberIds(String group) throws Exception {
        ConsumerGroupDescription d = KAFKA.admin().describeConsumerGroups(List.of(group)).describedGroups()
                .get(group).get(30, TimeUnit.SECONDS);
        return d.members().stream().map(MemberDescription::consumerId).collect(Collectors.toSet());
    }

    @Test
    void a_halted_partition_resumes_in_session_from_the_halted_record_while_others_go_on() throws Exception {
        String topic = KAFKA.createTopic("halt-resume", 2);
        kafka.produce(topic, 0, 4, 1);
        String group = kafka.group();
        try (KafkaSource source = KafkaSource.of(kafka.config(group, topic).build())) {
            take(source).ack().finalize(AckDecision.ok());
            Ingested one = take(source);
            assertThat(offset(one)).isEqualTo(1);
            one.ack().finalize(AckDecision.halt("stop here"));
            assertThat(source.halted()).isEqualTo(Map.of(topic + "-0", 1L));
            kafka.produce(topic, 1, 2, 1);
            Ingested other = take(source);
            assertThat(KafkaCoordinates.of(other.envelope()).partition()).as("the other partition goes on")
                    .isEqualTo(1);
            other.ack().finalize(AckDecision.ok());
            take(source).ack().finalize(AckDecision.ok());
            assertThat(TestKafka.drain(source, Duration.ofMillis(300))).as("the halted partition is paused").isEmpty();

            assertThat(source.resumeHalted(topic, 0)).isTrue();
            assertThat(source.resumeHalted(topic, 0)).as("only once").isFalse();
            for (long expected = 1; expected < 4; expected++) {
                Ingested m = take(source);
                assertThat(offset(m)).isEqualTo(expected);
                m.ack().finalize(AckDecision.ok());
            }
            await().atMost(WAIT).until(() -> kafka.fullyCommitted(group, topic, 2));
        }
    }

    @Test
    void a_record_before_the_halted_one_retried_after_the_halt_is_where_the_resume_starts() throws Exception {
        String topic = KAFKA.createTopic("halt-then-retry", 1);
        kafka.produce(topic, 0, 6, 1);
        String group = kafka.group();
        try (KafkaSource source = KafkaSource.of(kafka.config(group, topic).build())) {
            take(source).ack().finalize(AckDecision.ok());
            List<Ingested> inFlight = new ArrayList<>();
            for (int i = 1; i < 6; i++) {
                inFlight.add(take(source));
            }
            assertThat(inFlight).extracting(TestKafka::offset).containsExactly(1L, 2L, 3L, 4L, 5L);
            inFlight.get(4).ack().finalize(AckDecision.halt("stop at 5"));
            // 1 fails after 5 halted: 1-5 are superseded, and 1-4 must come again before anything commits past them
            inFlight.get(0).ack().finalize(AckDecision.retry(Duration.ZERO));
            inFlight.get(1).ack().finalize(AckDecision.ok()); // superseded: does nothing
            Map<String, Long> halted = source.halted();
            assertThat(TestKafka.drain(source, Duration.ofMillis(300))).as("still halted").isEmpty();

            assertThat(source.resumeHalted(topic, 0)).isTrue();
            for (long expected = 1; expected < 6; expected++) {
                Ingested m = take(source);
                assertThat(offset(m)).as("resumed from the retried record, in order").isEqualTo(expected);
                m.ack().finalize(AckDecision.ok());
            }
            await().atMost(WAIT).until(() -> kafka.fullyCommitted(group, topic, 1));
            assertThat(halted).as("halted at the retried record").isEqualTo(Map.of(topic + "-0", 1L));
        }
    }
}
