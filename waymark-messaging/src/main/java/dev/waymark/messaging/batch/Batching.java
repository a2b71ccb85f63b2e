package dev.waymark.messaging.batch;

import dev.waymark.messaging.AckDecision;
import dev.waymark.messaging.Envelope;
import dev.waymark.messaging.Handler;
import dev.waymark.messaging.Message;
import dev.waymark.messaging.MessagingConfigException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Batching as a handler: messages are grouped by a key into batches closed at {@code size} or when
 * their oldest message has waited {@code timeout}; the batch handler decides once per batch, and
 * each message is then finalized with its own decision by the runtime as usual. Each message waits,
 * in its handler call, for its batch, so the processor must run at least {@code size} handlers at
 * once: use {@code Concurrency.unordered(n)} with {@code n >= size}
 * ({@code ProcessingAppBuilder.build()} refuses a processor that runs fewer). A partial batch closes at the latest after
 * {@code timeout}, also while the app drains.
 */
public final class Batching implements Handler, AutoCloseable {

    private final int size;
    private final Duration timeout;
    private final Function<Envelope, String> key;
    private final BatchHandler handler;
    private final ScheduledExecutorService timer = Executors
            .newSingleThreadScheduledExecutor(Thread.ofPlatform().name("waymark-batch-timer").daemon(true).factory());
    private final Map<String, Batch> open = new HashMap<>();

    private static final class Batch {
        final String key;
        final List<Message> messages = new ArrayList<>();
        final List<CompletableFuture<AckDecision>> results = new ArrayList<>();
        ScheduledFuture<?> timeout;

        Batch(String key) {
            this.key = key;
        }
    }

    private Batching(int size, Duration timeout, Function<Envelope, String> key, BatchHandler handler) {
        this.size = size;
        this.timeout = timeout;
        this.key = key;
        this.handler = handler;
    }

    /**
     * A batching handler.
     *
     * @param size messages per batch, {@code >= 1}
     * @param timeout the longest a batch stays open, {@code > 0}
     * @param key the batch key of a message (null for one batch stream)
     * @throws MessagingConfigException for invalid values
     */
    public static Batching of(int size, Duration timeout, Function<Envelope, String> key, BatchHandler handler) {
        if (size < 1) {
            throw new MessagingConfigException("batch size must be >= 1, got " + size);
        }
        if (timeout == null || timeout.isZero() || timeout.isNegative()) {
            throw new MessagingConfigException("batch timeout must be > 0, got " + timeout);
        }
        if (handler == null) {
            throw new MessagingConfigException("batch handler must not be null");
        }
        return new Batching(size, timeout, key == null ? e -> "default" : key, handler);
    }

    /** Messages per batch. */
    public int size() {
        return size;
    }

    @Override
    public AckDecision handle(Message message) throws Exception {
        String k = key.apply(message.envelope());
        CompletableFuture<AckDecision> result = new CompletableFuture<>();
        Batch full = null;
        synchronized (open) {
            Batch batch = open.get(k);
            if (batch == null) {
                Batch created = new Batch(k);
                created.timeout = timer.schedule(() -> closeByTimeout(created), timeout.toNanos(),
                        TimeUnit.NANOSECONDS);
                open.put(k, created);
                batch = created;
            }
            batch.messages.add(message);
            batch.results.add(result);
            if (batch.messages.size() >= size) {
                open.remove(k);
                batch.timeout.cancel(false);
                full = batch;
            }
        }
        if (full != null) {
            run(full, BatchInfo.Trigger.SIZE);
        }
        try {
            return result.get();
        } catch (ExecutionException e) {
            switch (e.getCause()) {
                case Exception cause -> throw cause;
                case Error error -> throw error; // the runtime treats it as the handler's own, like an exception
                case null, default -> throw e;
            }
        }
    }

    private void closeByTimeout(Batch batch) {
        synchronized (open) {
            if (open.get(batch.key) != batch) {
                return; // closed by size meanwhile
            }
            open.remove(batch.key);
        }
        Thread.ofVirtual().start(() -> run(batch, BatchInfo.Trigger.TIMEOUT));
    }

    private void run(Batch batch, BatchInfo.Trigger trigger) {
        try {
            BatchAck ack = handler.handle(new BatchInfo(batch.key, batch.messages.size(), trigger),
                    List.copyOf(batch.messages));
            for (int i = 0; i < batch.messages.size(); i++) {
                batch.results.get(i).complete(ack.decisionFor(batch.messages.get(i).id()));
            }
        } catch (Exception | Error e) {
            // Every waiting message's handler call must return: an Error left them waiting forever.
            batch.results.forEach(r -> r.completeExceptionally(e));
        }
    }

    /** Stops the batch timer. */
    @Override
    public void close() {
        timer.shutdownNow();
    }
}
