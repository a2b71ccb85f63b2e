package dev.waymark.kafka;

import dev.waymark.messaging.AckDecision;
import dev.waymark.messaging.Concurrency;
import dev.waymark.messaging.ProcessingApp;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A group member in its own JVM, started by {@link ChildMember}: consumes until it is killed and prints
 * {@code H <message id>} for every record before acknowledging it (so whatever it committed, it printed).
 */
public final class CrashingMember {

    private CrashingMember() {}

    /**
     * Arguments: bootstrap servers, group, topic, and optionally a percentage of records retried
     * once with a 20 ms delay (see {@link KafkaRetryHoldTest#retried}); the rest are printed and
     * acknowledged.
     */
    public static void main(String[] args) throws Exception {
        int retryPercent = args.length > 3 ? Integer.parseInt(args[3]) : 0;
        KafkaSource source = KafkaSource.of(KafkaSourceConfig.builder(args[0], args[1]).topics(args[2])
                .pollTimeout(Duration.ofMillis(100)).commitInterval(Duration.ofMillis(50))
                .consumerProperty("session.timeout.ms", "6000").consumerProperty("heartbeat.interval.ms", "500")
                .missingDeadLetterTopic(MissingDeadLetterTopic.CREATE) // every member races to create it
                .build());
        ProcessingApp.builder().processor("child", source, Concurrency.serial(), m -> {
            LockSupport.parkNanos(1_000_000); // 1 ms of work: still busy when the parent kills it
            KafkaCoordinates at = KafkaCoordinates.of(m.envelope());
            if (m.envelope().attempt() == 0 && KafkaRetryHoldTest.retried(at.partition(), at.offset(), retryPercent)) {
                return AckDecision.retry(Duration.ofMillis(20));
            }
            System.out.println("H " + m.id()); // autoflushed before the acknowledgement
            return AckDecision.ok();
        }).build().start();
        new CountDownLatch(1).await(5, TimeUnit.MINUTES); // until SIGKILL
        System.exit(1);
    }
}
