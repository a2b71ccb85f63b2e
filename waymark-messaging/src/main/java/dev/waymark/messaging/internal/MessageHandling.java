package dev.waymark.messaging.internal;

import dev.waymark.messaging.AckDecision;
import dev.waymark.messaging.Handler;
import dev.waymark.messaging.Ingested;
import dev.waymark.messaging.Message;
import dev.waymark.messaging.ProcessorListener;
import dev.waymark.store.DeadLetterReason;
import dev.waymark.store.RetryPolicy;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One message's way through a processor: the handler's call, the decision when it throws (the
 * processor's {@link RetryPolicy}), finalization through the ack handle, counting and the listener.
 */
final class MessageHandling {

    /** What the processor tells this step and is told by it. */
    interface Host {
        /** Halted, failed or forced: nothing more is handled. */
        boolean terminal();

        /** A forced stop is under way: a handler's throw or return is not finalized. */
        boolean forced();

        /** Fails the processor (the first failure wins). */
        void fail(String messageId, String what, Throwable cause);

        /** A handler's decision halts the processor. */
        void halted(String messageId, String reason);
    }

    private static final Logger log = LoggerFactory.getLogger(ProcessorRuntime.class);

    private final String id;
    private final Handler handler;
    private final ProcessorListener listener;
    private final RetryPolicy retry;
    private final FinalizeGate finalizing;
    private final ProcessorCounters counters;
    private final Host host;
    /** Whether the listener wants handler timings (two clock reads per message). */
    private final boolean timed;

    MessageHandling(String id, Handler handler, ProcessorListener listener, RetryPolicy retry,
            FinalizeGate finalizing, ProcessorCounters counters, Host host) {
        this.id = id;
        this.handler = handler;
        this.listener = listener;
        this.retry = retry;
        this.finalizing = finalizing;
        this.counters = counters;
        this.host = host;
        this.timed = listener != ProcessorListener.NONE;
    }

    /** Handles {@code message} and finalizes it with the decision (or the retry policy's after a throw). */
    void handleAndFinalize(Ingested message) {
        if (host.terminal() || message.ack().isSuperseded()) {
            // A superseded delivery comes again, in order, from the source. After a halt or a failure
            // nothing more is handled: a message queued behind its key's halted or unfinalized one stays
            // unfinalized (delivered again), never acknowledged out of order.
            return;
        }
        AckDecision decision = null;
        Message view = new Message(message.envelope(), Optional.ofNullable(message.lease()));
        Throwable thrown = null;
        long started = timed ? System.nanoTime() : 0;
        try {
            decision = handler.handle(view);
            if (decision == null) {
                throw new IllegalStateException("handler returned null instead of an AckDecision");
            }
        } catch (Throwable e) {
            if (ProcessorRuntime.fatal(e)) {
                throw (VirtualMachineError) e; // not the handler's failure: the processor fails
            }
            thrown = e; // an Error of the handler's own (assertion, linkage, stack overflow) counts as a throw
        }
        long handlerNanos = timed ? System.nanoTime() - started : 0;
        // Only a forced stop interrupts a handler. A flag the handler left set ("restore the
        // interrupt") would fail the acknowledgement's waits and, on the serial loop, end the
        // processor at its next poll: it is cleared. Cleared first, then forced read: a forced stop
        // sets forced before it interrupts, so its interrupt is never taken for a stray one.
        if (Thread.interrupted()) {
            if (host.forced()) {
                Thread.currentThread().interrupt();
            } else {
                log.warn("processor {}: the handler left its thread interrupted on {}; the flag was cleared", id,
                        message.envelope().messageId());
            }
        }
        if (thrown != null) {
            if (host.forced()) {
                return;
            }
            counters.count(counters.failed);
            log.warn("processor {}: handler failed on {}: {}", id, message.envelope().messageId(), thrown.toString());
            decision = afterThrow(message.envelope().attempt());
        }
        if (!finalizing.enter()) {
            return; // after a forced stop returns, no finalizer runs
        }
        Throwable error;
        try {
            error = Finalizer.finalize(message, decision);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        } finally {
            finalizing.exit();
        }
        if (error != null) {
            host.fail(message.envelope().messageId(), "finalization failed after " + Finalizer.RETRY.maxAttempts()
                    + " attempts with " + decision, error);
            return;
        }
        account(message, decision);
        if (timed) {
            try {
                listener.handled(id, view, decision, handlerNanos, thrown);
            } catch (RuntimeException | LinkageError | AssertionError e) {
                // LinkageError too: a metrics listener whose optional library is missing throws
                // NoClassDefFoundError, and that must not end the processor
                log.debug("processor {}: listener failed: {}", id, e.toString());
            }
        }
    }

    /**
     * The decision for a message whose handler threw on delivery {@code attempt} (from 0, -1 when the
     * source cannot count): a retry after the policy's delay while it allows another attempt, else a
     * dead letter. An unknown attempt is retried.
     */
    private AckDecision afterThrow(int attempt) {
        int made = attempt < 0 ? 1 : attempt + 1L > Integer.MAX_VALUE ? Integer.MAX_VALUE : attempt + 1;
        if (attempt >= 0 && !retry.allowsAnotherAttempt(made)) {
            return AckDecision.deadLetter(DeadLetterReason.maxAttempts(made));
        }
        return AckDecision.retry(retry.delayBefore(made, ThreadLocalRandom.current()));
    }

    /** Counts a finalized decision; a halt stops the processor. */
    private void account(Ingested message, AckDecision decision) {
        switch (decision) {
            case AckDecision.Ok ok -> counters.count(counters.succeeded);
            case AckDecision.Retry r -> counters.count(counters.retried);
            case AckDecision.DeadLetter d -> {
                counters.count(counters.failed);
                counters.count(counters.deadLettered);
            }
            case AckDecision.Halt h -> {
                host.halted(message.envelope().messageId(), h.reason());
            }
        }
    }
}
