package dev.waymark.messaging.internal;

import dev.waymark.messaging.AckDecision;
import dev.waymark.messaging.Ingested;
import dev.waymark.store.RetryPolicy;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Calls an ack handle with the same decision until it succeeds or the attempts run out. */
final class Finalizer {

    private static final Logger log = LoggerFactory.getLogger(Finalizer.class);

    /** Four attempts in all, the retries after 10, 50 and 250 ms. */
    static final RetryPolicy RETRY = new RetryPolicy(4, Duration.ofMillis(10), 5.0, Duration.ofMillis(250), 0.0);

    private Finalizer() {}

    /**
     * @return null on success, else the last failure (an {@code Error} of the ack handle counts as a
     *     failed attempt, except a fatal {@link VirtualMachineError}, which propagates)
     */
    static Throwable finalize(Ingested message, AckDecision decision) throws InterruptedException {
        Throwable last = attempt(message, decision); // the common case: the first attempt succeeds
        for (int retry = 1; last != null && RETRY.allowsAnotherAttempt(retry); retry++) {
            TimeUnit.NANOSECONDS.sleep(RETRY.delayBefore(retry).toNanos());
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
