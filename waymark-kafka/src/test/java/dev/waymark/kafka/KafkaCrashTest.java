package dev.waymark.kafka;

import static dev.waymark.kafka.TestKafka.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.messaging.AckDecision;
import dev.waymark.messaging.Concurrency;
import dev.waymark.messaging.ProcessingApp;
import dev.waymark.messaging.ProcessorState;
import dev.waymark.testkit.KafkaExtension;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Checklist 36 with a real crash: a member in another JVM is killed with SIGKILL mid-stream. */
class KafkaCrashTest {

    @RegisterExtension
    static final KafkaExtension KAFKA = new KafkaExtension();

    private final TestKafka kafka = new TestKafka(KAFKA);

    @Test
    void a_member_killed_with_sigkill_mid_stream_loses_nothing_and_the_survivor_reaches_zero_lag()
            throws Exception {
        String topic = KAFKA.createTopic("crash", 4);
        kafka.produce(topic, -1, 3_000, 300);
        String group = kafka.group();
        Set<String> handledBySurvivor = ConcurrentHashMap.newKeySet();
        ProcessingApp survivor = null;
        try (ChildMember child = ChildMember.start(KAFKA.bootstrapServers(), group, topic)) {
            await().atMost(WAIT).until(() -> child.handled.size() >= 300);
            survivor = ProcessingApp.builder().processor("survivor",
                    KafkaSource.of(kafka.config(group, topic).build()), Concurrency.serial(), m -> {
                        handledBySurvivor.add(m.id());
                        return AckDecision.ok();
                    }).build().start();
            await().atMost(WAIT).until(() -> !handledBySurvivor.isEmpty()); // the group rebalanced onto both
            child.kill(); // SIGKILL: no commit, no LeaveGroup
            kafka.produce(topic, -1, 1_000, 300);

            ProcessingApp app = survivor;
            await().atMost(Duration.ofSeconds(60)).until(() -> kafka.fullyCommitted(group, topic, 4));
            Set<String> all = ConcurrentHashMap.newKeySet();
            all.addAll(child.handled);
            all.addAll(handledBySurvivor);
            assertThat(all).hasSize(4_000);
            assertThat(app.snapshot().get("survivor").lifecycle()).isEqualTo(ProcessorState.Lifecycle.RUNNING);
            assertThat(child.handled).isNotEmpty().hasSizeLessThan(4_000);
        } finally {
            if (survivor != null) {
                survivor.stop();
            }
        }
    }
}
