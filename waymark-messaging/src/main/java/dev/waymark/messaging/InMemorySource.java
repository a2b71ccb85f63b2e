package dev.waymark.messaging;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An in-memory source for tests and examples. Messages sent to it are delivered in order; each
 * finalization is recorded ({@link #decisions()}); a retried message is redelivered after its delay
 * with its attempt incremented. {@link #complete()} ends it once everything sent was delivered.
 */
public final class InMemorySource implements MessageSource {

    /**
     * One recorded finalization.
     *
     * @param messageId the message
     * @param decision what was decided
     */
    public record Finalized(String messageId, AckDecision decision) {}

    private final String name;
    private final LinkedBlockingQueue<Envelope> queue = new LinkedBlockingQueue<>();
    private final List<Finalized> decisions = new CopyOnWriteArrayList<>();
    private final Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>();
    private final AtomicLong pulled = new AtomicLong();
    private final AtomicLong ids = new AtomicLong();
    private final AtomicInteger shutdowns = new AtomicInteger();
    /** No more sends: finished once everything sent, and every redelivery due, was delivered. */
    private volatile boolean completed;
    /** Shut down: what was not pulled stays with the "broker", and nothing is redelivered. */
    private volatile boolean shut;
    /** Retried messages waiting out their delay. */
    private final AtomicInteger redeliveries = new AtomicInteger();
    /** Messages handed out and not finalized yet (a retry may still come of them). */
    private final AtomicInteger unsettled = new AtomicInteger();

    /** A source named {@code name}. */
    public InMemorySource(String name) {
        this.name = name;
    }

    /** Sends a message with a generated id. */
    public void send(String orderingKey, String payload) {
        send(Envelope.builder(name + "-" + ids.incrementAndGet(), payload.getBytes(StandardCharsets.UTF_8))
                .orderingKey(orderingKey).key(orderingKey).build());
    }

    /** Sends an envelope. */
    public void send(Envelope envelope) {
        if (completed) {
            throw new IllegalStateException("source '" + name + "' is complete");
        }
        queue.add(envelope);
    }

    /**
     * Ends the source once every message sent so far is delivered and finalized for good: a message
     * handed out may still be retried, and a retried one is delivered again after its delay.
     */
    public void complete() {
        completed = true;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Optional<Ingested> poll(Duration timeout) throws InterruptedException {
        Envelope next = queue.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
        if (next == null) {
            return Optional.empty();
        }
        pulled.incrementAndGet();
        unsettled.incrementAndGet();
        int attempt = attempts.computeIfAbsent(next.messageId(), k -> new AtomicInteger()).get();
        Envelope delivered = new Envelope(next.messageId(), next.key(), next.orderingKey(), next.headers(),
                next.payload(), next.tombstone(), next.eventTime(), java.time.Instant.now(), attempt,
                next.traceparent(),
                next.tracestate(), next.cursor(), next.attributes());
        return Optional.of(Ingested.of(delivered, decision -> finalize(next, decision)));
    }

    private void finalize(Envelope envelope, AckDecision decision) {
        try {
            record(envelope, decision);
        } finally {
            unsettled.decrementAndGet(); // after a retry is counted: isFinished never sees neither
        }
    }

    private void record(Envelope envelope, AckDecision decision) {
        decisions.add(new Finalized(envelope.messageId(), decision));
        if (decision instanceof AckDecision.Retry retry && !shut) {
            attempts.get(envelope.messageId()).incrementAndGet();
            redeliveries.incrementAndGet();
            Thread.ofVirtual().start(() -> {
                try {
                    TimeUnit.NANOSECONDS.sleep(retry.delay().toNanos());
                    if (!shut) {
                        queue.add(envelope);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    redeliveries.decrementAndGet(); // after the add: isFinished never sees neither
                }
            });
        }
    }

    @Override
    public boolean isFinished() {
        return shut || (completed && unsettled.get() == 0 && redeliveries.get() == 0 && queue.isEmpty());
    }

    @Override
    public void shutdown() {
        shutdowns.incrementAndGet();
        shut = true;
        completed = true;
        queue.clear(); // what was not pulled stays with the "broker"
    }

    /** Every finalization so far, in order. */
    public List<Finalized> decisions() {
        return List.copyOf(decisions);
    }

    /** How many messages were pulled. */
    public long pulled() {
        return pulled.get();
    }

    /** How many times {@link #shutdown()} was called. */
    public int shutdowns() {
        return shutdowns.get();
    }
}
