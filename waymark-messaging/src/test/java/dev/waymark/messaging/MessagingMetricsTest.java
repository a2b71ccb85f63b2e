package dev.waymark.messaging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.waymark.messaging.micrometer.MessagingMetrics;
import dev.waymark.store.DeadLetterReason;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class MessagingMetricsTest {

    @Test
    void counters_gauges_and_handler_timers_follow_the_processor() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        MessagingMetrics metrics = new MessagingMetrics(registry);
        InMemorySource source = new InMemorySource("s");
        for (int i = 0; i < 10; i++) {
            source.send("k", Integer.toString(i));
        }
        ProcessingApp app = metrics.bind(ProcessingApp.builder().listener(metrics)
                .processor("orders", source, Concurrency.serial(), m -> switch (new String(m.payload())) {
                    case "3" -> AckDecision.deadLetter(DeadLetterReason.poison("bad"));
                    case "5" -> {
                        if (m.envelope().attempt() == 0) {
                            throw new IllegalStateException("boom");
                        }
                        yield AckDecision.ok();
                    }
                    default -> AckDecision.ok();
                }).build()).start();
        await().atMost(Duration.ofSeconds(10)).until(() -> source.decisions().size() >= 11);
        app.stop();
        assertThat(registry.get("waymark.messaging.received").tag("processor", "orders").functionCounter().count())
                .isEqualTo(11); // 10 + the redelivered "5"
        assertThat(registry.get("waymark.messaging.dead_lettered").functionCounter().count()).isEqualTo(1);
        assertThat(registry.get("waymark.messaging.failed").functionCounter().count()).isEqualTo(2);
        assertThat(registry.get("waymark.messaging.retried").functionCounter().count()).isEqualTo(1);
        assertThat(registry.get("waymark.messaging.handler").tag("outcome", "ok").timer().count()).isEqualTo(9);
        assertThat(registry.get("waymark.messaging.handler").tag("outcome", "exception").timer().count()).isEqualTo(1);
        assertThat(registry.get("waymark.messaging.state").gauge().value())
                .isEqualTo(ProcessorState.Lifecycle.STOPPED.ordinal());
        assertThat(registry.get("waymark.messaging.in_flight").gauge().value()).isZero();
    }
}
