package dev.waymark.kafka;

import static dev.waymark.kafka.TestKafka.WAIT;
import static dev.waymark.kafka.TestKafka.offset;
import static dev.waymark.kafka.TestKafka.take;
import static dev.waymark.kafka.TestKafka.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.kafka.KafkaSourceEvent.Kind;
import dev.waymark.messaging.AckDecision;
import dev.waymark.messaging.Concurrency;
import dev.waymark.messaging.Ingested;
import dev.waymark.messaging.MessageSource;
import dev.waymark.messaging.ProcessingApp;
import dev.waymark.messaging.ProcessorState;
import dev.waymark.testkit.KafkaExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Rebalances with real consumers: checklist 25-27 and 36. */
class KafkaRebalanceTest {

    @RegisterExtension
    static final KafkaExtension KAFKA = new KafkaExtension();

    private final TestKafka kafka = new TestKafka(KAFKA);

    /** Starts {@code joining} (its first poll) and waits until the group revoked {@code owner}'s partitions. */
    private static void joinAndAwaitRevoke(KafkaSource joining, RecordingListener owner, int partitions)
            throws Exception {
        assertThat(joining.poll(Duration.ofMillis(1))).isEmpty();
        await().atMost(WAIT).until(() -> owner.count(Kind.REVOKED) >= partitions);
    }

    @Test
    void after_a_real_revocation_the_old_owners_late_ack_commits_nothing_and_the_record_comes_again()
            throws Exception {
        String topic = KAFKA.createTopic("fence", 1);
        kafka.produce(topic, 0, 1, 1);
        String group = kafka.group();
        RecordingListener eventsA = new RecordingListener();
        RecordingListener eventsB = new RecordingListener();
        try (KafkaSource a = KafkaSource.of(kafka.config(group, topic).listener(eventsA).build());
                KafkaSource b = KafkaSource.of(kafka.config(group, topic).listener(eventsB).build())) {
            Ingested held = take(a);
            assertThat(offset(held)).isZero();
            joinAndAwaitRevoke(b, eventsA, 1); // b joins: the rebalance revokes a's partition (even if a gets it back)

            held.ack().finalize(AckDecision.ok()); // the old owner's late acknowledgement
            held.ack().finalize(AckDecision.retry(Duration.ZERO));
            held.ack().finalize(AckDecision.halt("late"));
            await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(2))
                    .until(() -> !kafka.committed(group, topic).containsKey(0));
            assertThat(eventsA.of(Kind.SEEK)).isEmpty();
            assertThat(eventsA.of(Kind.HALTED)).isEmpty();
            assertThat(a.failure()).isEmpty();

            // Whoever owns the partition now gets the record again, and can commit it.
            Ingested again = null;
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (again == null && System.nanoTime() < deadline) {
                again = a.poll(Duration.ofMillis(20)).or(() -> poll(b)).orElse(null);
            }
            assertThat(again).isNotNull();
            assertThat(offset(again)).isZero();
            assertThat(text(again.envelope().payload())).isEqualTo("v0");
            again.ack().finalize(AckDecision.ok());
            await().atMost(WAIT).until(() -> kafka.fullyCommitted(group, topic, 1));
            assertThat(eventsA.of(Kind.FATAL)).isEmpty();
            assertThat(eventsB.of(Kind.FATAL)).isEmpty();
        }
    }

    private static Optional<Ingested> poll(KafkaSource source) {
        try {
            return source.poll(Duration.ofMillis(20));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    @Test
    void records_buffered_for_a_revoked_partition_are_never_handed_out() throws Exception {
        String topic = KAFKA.createTopic("stale", 2);
        kafka.produce(topic, 0, 200, 1);
        kafka.produce(topic, 1, 200, 1);
        String group = kafka.group();
        RecordingListener eventsA = new RecordingListener();
        RecordingListener eventsB = new RecordingListener();
        try (KafkaSource a = KafkaSource.of(kafka.config(group, topic).listener(eventsA).build());
                KafkaSource b = KafkaSource.of(kafka.config(group, topic).listener(eventsB).build())) {
            Ingested first = take(a); // a now has (up to) 200 records of each partition buffered
            int firstPartition = KafkaCoordinates.of(first.envelope()).partition();
            joinAndAwaitRevoke(b, eventsA, 2);
            first.ack().finalize(AckDecision.ok()); // fenced: nothing was committed for it
            // After the revoke, a's first record of any partition it holds again restarts at the
            // committed offset (0): none of the 199 records buffered before the revoke is handed out.
            await().atMost(WAIT).until(() -> assignedPartitions(eventsA) >= 1); // 2 partitions, 2 members
            Map<Integer, Long> firstAfterRevoke = new HashMap<>();
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (System.nanoTime() < deadline && firstAfterRevoke.size() < assignedPartitions(eventsA)) {
                Optional<Ingested> m = a.poll(Duration.ofMillis(20));
                if (m.isPresent()) {
                    KafkaCoordinates at = KafkaCoordinates.of(m.get().envelope());
                    firstAfterRevoke.putIfAbsent(at.partition(), at.offset());
                }
                b.poll(Duration.ofMillis(1)); // keep b's consumer alive; what it takes is not acknowledged
            }
            assertThat(firstAfterRevoke).isNotEmpty();
            assertThat(firstAfterRevoke.values()).allSatisfy(o -> assertThat(o).isZero());
            assertThat(kafka.committed(group, topic)).doesNotContainKey(firstPartition);
        }
    }

    private static int assignedPartitions(RecordingListener events) {
        // partitions assigned by the latest rebalance (after the last revoke)
        List<KafkaSourceEvent> all = events.events;
        int lastRevoke = -1;
        for (int i = 0; i < all.size(); i++) {
            if (all.get(i).kind() == Kind.REVOKED) {
                lastRevoke = i;
            }
        }
        int n = 0;
        for (int i = lastRevoke + 1; i < all.size(); i++) {
            if (all.get(i).kind() == Kind.ASSIGNED) {
                n++;
            }
        }
        return n;
    }

    @Test
    void a_member_whose_processor_fails_leaves_the_group_at_once_and_the_other_takes_every_partition_over()
            throws Exception {
        int partitions = 4;
        String topic = KAFKA.createTopic("failed-member", partitions);
        String group = kafka.group();
        AtomicReference<String> fatalOn = new AtomicReference<>();
        Set<String> handledByB = ConcurrentHashMap.newKeySet();
        // a's session is a minute long: b owning everything well within it means a left the group itself.
        KafkaSource sourceA = KafkaSource.of(kafka.config(group, topic).name("a")
                .consumerProperty(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "60000")
                .consumerProperty(ConsumerConfig.CLIENT_ID_CONFIG, "member-a").build());
        KafkaSource sourceB = KafkaSource.of(kafka.config(group, topic).name("b")
                .consumerProperty(ConsumerConfig.CLIENT_ID_CONFIG, "member-b").build());
        ProcessingApp a = ProcessingApp.builder().processor("a", sourceA, Concurrency.serial(), m -> {
            fatalOn.compareAndSet(null, m.id());
            throw new OutOfMemoryError("test: member a's processor fails");
        }).build().start();
        ProcessingApp b = ProcessingApp.builder().processor("b", sourceB, Concurrency.serial(), m -> {
            handledByB.add(m.id());
            return AckDecision.ok();
        }).build().start();
        try {
            await().atMost(WAIT).until(() -> {
                Map<String, Integer> owned = kafka.owned(group);
                return owned.size() == 2 && !owned.containsValue(0);
            });
            for (int p = 0; p < partitions; p++) {
                kafka.produce(topic, p, 25, 1);
            }
            await().atMost(WAIT).until(() -> a.snapshot().get("a").lifecycle() == ProcessorState.Lifecycle.FAILED);

            await().atMost(Duration.ofSeconds(20))
                    .until(() -> kafka.owned(group).equals(Map.of("member-b", partitions)));
            await().atMost(WAIT)
                    .until(() -> handledByB.size() == 100 && kafka.fullyCommitted(group, topic, partitions));
            assertThat(handledByB).as("nothing lost, the record a failed on included").contains(fatalOn.get());
            assertThat(sourceA.isFinished()).as("a's consumer committed and closed").isTrue();
            assertThat(sourceA.failure()).isEmpty();
        } finally {
            a.stop();
            b.stop();
            sourceA.close();
            sourceB.close();
        }
    }

    /** A processor member of the churn test; hand-outs are checked for monotonic offsets per partition. */
    private final class Member {
        final RecordingListener events = new RecordingListener();
        final AtomicInteger assignments = new AtomicInteger();
        final KafkaSource source;
        final ProcessingApp app;
        final Map<Integer, Long> lastOffset = new HashMap<>();
        final Map<Integer, Integer> lastAssignments = new HashMap<>();
        final List<String> violations;

        Member(String name, String group, String topic, Set<String> handled, List<String> violations) {
            this.violations = violations;
            source = KafkaSource.of(kafka.config(group, topic).name(name).maxPollRecords(50).listener(events)
                    .listener(e -> {
                        if (e.kind() == Kind.ASSIGNED) {
                            assignments.incrementAndGet();
                        }
                    }).build());
            MessageSource checked = new MessageSource() {
                @Override
                public String name() {
                    return source.name();
                }

                @Override
                public Optional<Ingested> poll(Duration timeout) throws Exception {
                    int before = assignments.get();
                    Optional<Ingested> m = source.poll(timeout);
                    m.ifPresent(i -> check(KafkaCoordinates.of(i.envelope()), before));
                    return m;
                }

                @Override
                public boolean isFinished() {
                    return source.isFinished();
                }

                @Override
                public void shutdown() {
                    source.shutdown();
                }
            };
            app = ProcessingApp.builder().processor(name, checked, Concurrency.serial(), m -> {
                LockSupport.parkNanos(200_000); // a little work per record, so membership changes mid-stream
                if (Math.floorMod(m.id().hashCode(), 100) == 0 && m.envelope().attempt() == 0) {
                    return AckDecision.retry(Duration.ZERO); // about 1% retried: barriers under churn
                }
                handled.add(KafkaCoordinates.of(m.envelope()).messageId());
                return AckDecision.ok();
            }).build().start();
        }

        /**
         * Within one assignment, hand-outs of a partition only move forward, except that a retried
         * record comes again (serial: the very next hand-out repeats its offset).
         */
        private void check(KafkaCoordinates at, int assignmentsBeforePoll) {
            Long last = lastOffset.put(at.partition(), at.offset());
            Integer lastSeenAssignments = lastAssignments.put(at.partition(), assignments.get());
            if (last != null && at.offset() < last && lastSeenAssignments != null
                    && assignmentsBeforePoll <= lastSeenAssignments) {
                violations.add(source.name() + " handed out " + at + " after offset " + last
                        + " within one assignment");
            }
        }

        ProcessorState state() {
            return app.snapshot().values().iterator().next();
        }
    }

    /**
     * Members join, one leaves gracefully, one crashes for real (a member in a JVM of its own, killed
     * with SIGKILL: no commit, no LeaveGroup; its partitions move once its 6 s session expires), and
     * more join. The in-process members check that their hand-outs move forward per partition.
     */
    @Test
    void churn_of_members_joining_leaving_and_crashing_under_load_loses_nothing_and_reaches_zero_lag()
            throws Exception {
        String topic = KAFKA.createTopic("churn", 6);
        kafka.produce(topic, -1, 3_000, 500);
        String group = kafka.group();
        Set<String> handled = ConcurrentHashMap.newKeySet();
        List<String> violations = new CopyOnWriteArrayList<>();
        List<Member> members = new ArrayList<>();
        ChildMember crashing = null;
        try {
            members.add(new Member("m1", group, topic, handled, violations));
            await().atMost(WAIT).until(() -> handled.size() >= 300);
            ChildMember child = ChildMember.start(KAFKA.bootstrapServers(), group, topic);
            crashing = child;
            await().atMost(WAIT).until(() -> {
                Map<String, Integer> owned = kafka.owned(group);
                return owned.size() == 2 && !owned.containsValue(0); // the child joined and owns partitions
            });
            members.add(new Member("m3", group, topic, handled, violations));
            await().atMost(WAIT).until(() -> union(handled, child).size() >= 1_500);
            Member leaving = members.get(0);
            assertThat(leaving.app.stop()).as("m1 leaves gracefully").isTrue();
            kafka.produce(topic, -1, 1_500, 500);
            await().atMost(WAIT).until(() -> union(handled, child).size() >= 2_200 && !child.handled.isEmpty());
            child.kill(); // SIGKILL mid-stream
            members.add(new Member("m4", group, topic, handled, violations));
            await().atMost(WAIT).until(() -> union(handled, child).size() >= 3_000);
            members.add(new Member("m5", group, topic, handled, violations)); // restart of a member
            kafka.produce(topic, -1, 1_500, 500);

            await().atMost(Duration.ofSeconds(60)).until(() -> union(handled, child).size() == 6_000
                    && kafka.fullyCommitted(group, topic, 6));
            for (Member m : members.subList(1, members.size())) {
                assertThat(m.state().lifecycle()).as("survivor %s", m.source.name())
                        .isEqualTo(ProcessorState.Lifecycle.RUNNING);
                assertThat(m.source.failure()).isEmpty();
            }
            assertThat(violations).isEmpty();
            Map<Integer, Long> ends = kafka.endOffsets(topic, 6);
            assertThat(ends.values().stream().mapToLong(Long::longValue).sum()).isEqualTo(6_000);
            assertThat(members.stream().mapToLong(m -> m.events.count(Kind.REVOKED)).sum()).isPositive();
        } finally {
            if (crashing != null) {
                crashing.close();
            }
            for (Member m : members) {
                m.app.stop(Duration.ofSeconds(5), Duration.ofSeconds(10));
                m.source.close();
            }
        }
    }

    /** Every id handled, by the in-process members or the child. */
    private static Set<String> union(Set<String> handled, ChildMember child) {
        Set<String> all = new HashSet<>(handled);
        all.addAll(child.handled);
        return all;
    }
}
