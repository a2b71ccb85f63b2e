package dev.waymark.messaging.internal;

import dev.waymark.messaging.AckDecision;
import dev.waymark.messaging.Ingested;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Calls an ack handle with the same decision until it succeeds or the attempts run out. */
final class Finalizer {

    private static final Logger log = LoggerFactory.getLogger(Finalizer.class);

    /** The delays before each attempt: 0, 10, 50, 250 ms (four attempts). */
    static final List<Duration> DELAYS =
            List.of(Duration.ZERO, Duration.ofMillis(10), Duration.ofMillis(50), Duration.ofMillis(250));

    private Finalizer() {}

    /**
     * @return null on success, else the last failure (an {@code Error} of the ack handle counts as a
     *     failed attempt, except a fatal {@link VirtualMachineError}, which propagates)
     */
    static Throwable finalize(Ingested message, AckDecision decision) throws InterruptedException {
        Throwable last = attempt(message, decision); // the common case: the first attempt succeeds
        for (int i = 1; last != null && i < DELAYS.size(); i++) {
            TimeUnit.NANOSECONDS.sleep(DELAYS.get(i).toNanos());
            last = attempt(message, decision);
        }
        return last;
    }

    private static Throwable attempt(Ingested message, AckDecision decision) throws InterruptedException {
        try {
            message.ack().finalize(decision);
            return null;
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception | Error e) {
            if (ProcessorRuntime.fatal(e)) {
                throw (VirtualMachineError) e;
            }
            log.warn("finalizing message {} with {} failed: {}", message.envelope().messageId(), decision,
                    e.toString());
            return e;
        }
    }
}
