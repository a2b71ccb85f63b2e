package dev.waymark.messaging.store;

import dev.waymark.messaging.AckDecision;
import dev.waymark.messaging.AckHandle;
import dev.waymark.messaging.Envelope;
import dev.waymark.messaging.Ingested;
import dev.waymark.messaging.MessageSource;
import dev.waymark.store.RecordedEvent;
import dev.waymark.subscription.Ack;
import dev.waymark.subscription.AckStream;
import dev.waymark.subscription.SubscriptionBuilder;
import dev.waymark.subscription.SubscriptionException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An event-store subscription as a message source. Each delivered event becomes a message (id =
 * event id, ordering key = stream name, cursor = global position, payload = the JSON data, headers
 * with the event type, stream and version); ok, retry and dead-letter map onto the subscription's
 * acknowledgement (its retry budget and dead letters apply); halt stops the subscription without
 * acknowledging, so the event is delivered again on the next start. The subscription hands out one
 * event at a time and waits for its acknowledgement, so store order is kept whatever the processor's
 * concurrency.
 */
public final class SubscriptionSource implements MessageSource {

    private final SubscriptionBuilder subscription;
    private final String name;
    private final AtomicBoolean finished = new AtomicBoolean();
    private final AtomicInteger outstanding = new AtomicInteger();
    /** The processor has ended: what is outstanding will never be finalized. */
    private volatile boolean processorEnded;
    private volatile AckStream stream;

    private SubscriptionSource(SubscriptionBuilder subscription) {
        this.subscription = subscription;
        this.name = "subscription:" + subscription.config().name();
    }

    /** A source over the subscription {@code builder} describes; the subscription starts on the first poll. */
    public static SubscriptionSource of(SubscriptionBuilder builder) {
        builder.config(); // validate now, before anything starts
        return new SubscriptionSource(builder);
    }

    @Override
    public String name() {
        return name;
    }

    private AckStream stream() {
        AckStream s = stream;
        if (s == null) {
            synchronized (this) {
                if (stream == null) {
                    stream = subscription.openAckStream();
                }
                s = stream;
            }
        }
        return s;
    }

    @Override
    public Optional<Ingested> poll(Duration timeout) throws InterruptedException {
        if (finished.get()) {
            return Optional.empty();
        }
        Optional<AckStream.Item> item;
        try {
            item = stream().next(timeout);
        } catch (SubscriptionException e) {
            if (finished.get()) {
                return Optional.empty(); // stopped by a shutdown or a halt while polling: the end, not a failure
            }
            throw e;
        }
        if (item.isEmpty()) {
            return Optional.empty();
        }
        outstanding.incrementAndGet();
        AckStream.Item it = item.get();
        return Optional.of(Ingested.of(envelope(it), handle(it)));
    }

    private AckHandle handle(AckStream.Item item) {
        AtomicBoolean done = new AtomicBoolean();
        return decision -> {
            // the answer is built first: a decision that cannot be mapped throws before the handle
            // counts as done, so the runtime's next attempt is not mistaken for a success
            Ack ack = switch (decision) {
                case AckDecision.Ok ok -> Ack.ok();
                case AckDecision.Retry r -> Ack.retry(r.delay());
                case AckDecision.DeadLetter d -> Ack.deadLetter(d.reason());
                case AckDecision.Halt h -> null;
            };
            if (!done.compareAndSet(false, true)) {
                return; // idempotent: the runtime may finalize again after a failure
            }
            try {
                if (ack != null) {
                    item.reply(ack);
                } else {
                    finished.set(true);
                    stream().close(); // a halt stops the subscription without acknowledging this event
                }
            } finally {
                outstanding.decrementAndGet();
                closeWhenDrained();
            }
        };
    }

    private static Envelope envelope(AckStream.Item item) {
        RecordedEvent e = item.delivery().event();
        return Envelope.builder(e.eventId().toString(), e.data().getBytes(StandardCharsets.UTF_8))
                .key(e.streamName())
                .orderingKey(e.streamName())
                .headers(List.of(
                        new Envelope.Header("waymark-event-type", e.type().getBytes(StandardCharsets.UTF_8)),
                        new Envelope.Header("waymark-stream", e.streamName().getBytes(StandardCharsets.UTF_8)),
                        new Envelope.Header("waymark-stream-version",
                                Long.toString(e.streamVersion()).getBytes(StandardCharsets.UTF_8))))
                .eventTime(e.createdAt())
                .attempt(item.delivery().attempt())
                .trace(e.traceparent().orElse(null),
                        dev.waymark.store.TraceContext.tracestate(e.metadata()).orElse(null))
                .cursor(e.position().toString())
                .build();
    }

    @Override
    public boolean isFinished() {
        return finished.get() && drained();
    }

    /**
     * Ends the source: no new messages; the subscription stops once handed-out messages are
     * finalized, or at once when the processor has ended (they are delivered again on the next start).
     */
    @Override
    public void shutdown() {
        finished.set(true);
        closeWhenDrained();
    }

    /** The processor finalizes nothing more: a shutdown (before or after this) stops the subscription at once. */
    @Override
    public void processorEnded() {
        processorEnded = true;
        closeWhenDrained();
    }

    private boolean drained() {
        return outstanding.get() == 0 || processorEnded;
    }

    private void closeWhenDrained() {
        if (finished.get() && drained()) {
            AckStream s = stream;
            if (s != null) {
                s.close();
            }
        }
    }
}
