package dev.waymark.messaging;

import dev.waymark.core.RetryPolicy;
import dev.waymark.messaging.batch.Batching;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Configures a {@link ProcessingApp}, from {@link ProcessingApp#builder()}. The setters only record
 * their values; {@link #build()} validates everything, before any source is touched, and logs the
 * effective configuration in one INFO line. The defaults are the {@code DEFAULT_*} constants of
 * {@link ProcessingApp}.
 */
public final class ProcessingAppBuilder {

    private static final Logger log = LoggerFactory.getLogger(ProcessingAppBuilder.class);

    /** One processor as registered. */
    record Spec(String id, MessageSource source, Concurrency concurrency, Handler handler) {}

    final List<Spec> specs = new ArrayList<>();
    int inboxSize = ProcessingApp.DEFAULT_INBOX_SIZE;
    FailureStrategy strategy = ProcessingApp.DEFAULT_FAILURE_STRATEGY;
    RetryPolicy retry = ProcessingApp.DEFAULT_RETRY;
    ProcessorListener listener = ProcessorListener.NONE;

    ProcessingAppBuilder() {}

    /**
     * Observe every handled message (for example {@code MessagingMetrics}); default
     * {@link ProcessorListener#NONE}.
     *
     * @throws MessagingConfigException if {@code listener} is null (pass {@link ProcessorListener#NONE})
     */
    public ProcessingAppBuilder listener(ProcessorListener listener) {
        if (listener == null) {
            throw new MessagingConfigException("listener must not be null (ProcessorListener.NONE for none)");
        }
        this.listener = listener;
        return this;
    }

    /** Adds a processor: messages from {@code source} go to {@code handler} under {@code concurrency}. */
    public ProcessingAppBuilder processor(String id, MessageSource source, Concurrency concurrency, Handler handler) {
        specs.add(new Spec(id, source, concurrency, handler));
        return this;
    }

    /** Messages each processor may hold pulled but not started, {@code >= 1}; default 100. */
    public ProcessingAppBuilder inboxSize(int size) {
        this.inboxSize = size;
        return this;
    }

    /** What a failure does to the others; default {@link ProcessingApp#DEFAULT_FAILURE_STRATEGY} ({@link FailureStrategy#ISOLATE}). */
    public ProcessingAppBuilder failureStrategy(FailureStrategy strategy) {
        this.strategy = strategy;
        return this;
    }

    /**
     * How a message whose handler throws is retried: while {@link RetryPolicy#allowsAnotherAttempt}
     * its delivery attempt ({@link Envelope#attempt()} + 1), it is finalized with {@link
     * AckDecision#retry(Duration)} after the policy's delay; then with {@link AckDecision#deadLetter}
     * ({@link dev.waymark.core.DeadLetterReason#maxAttempts}), so give a bounded policy only to a
     * source that records dead letters (a Kafka source with a dead-letter topic, a store
     * subscription). A source that cannot count attempts ({@code attempt() == -1}) is retried
     * without limit. A decision the handler returns is never changed. Not null; default
     * {@link ProcessingApp#DEFAULT_RETRY} (for ever, 1 s apart).
     */
    public ProcessingAppBuilder retry(RetryPolicy policy) {
        this.retry = policy;
        return this;
    }

    /**
     * Validates the configuration and logs it in one INFO line; nothing is started and no source
     * is touched.
     *
     * @throws MessagingConfigException naming the problem
     */
    public ProcessingApp build() {
        if (inboxSize < 1) {
            throw new MessagingConfigException("inboxSize must be >= 1, got " + inboxSize);
        }
        if (strategy == null) {
            throw new MessagingConfigException("failureStrategy must not be null");
        }
        if (retry == null) {
            throw new MessagingConfigException("retry must not be null");
        }
        if (specs.isEmpty()) {
            throw new MessagingConfigException("an app needs at least one processor");
        }
        Set<String> ids = new HashSet<>();
        Map<MessageSource, String> sources = new IdentityHashMap<>();
        for (Spec spec : specs) {
            if (spec.id == null || spec.id.isBlank()) {
                throw new MessagingConfigException("processor id must not be blank");
            }
            if (!ids.add(spec.id)) {
                throw new MessagingConfigException("processor id '" + spec.id + "' is used twice");
            }
            if (spec.source == null || spec.concurrency == null || spec.handler == null) {
                throw new MessagingConfigException("processor '" + spec.id
                        + "' needs a source, a concurrency and a handler");
            }
            if (spec.handler instanceof Batching batching
                    && (!(spec.concurrency instanceof Concurrency.Unordered)
                            || spec.concurrency.parallelism() < batching.size())) {
                // under a keyed or serial order a key's messages wait for each other, and with fewer
                // handlers than the batch size a batch never fills: batches would close by timeout only
                throw new MessagingConfigException("processor '" + spec.id + "' batches " + batching.size()
                        + " messages but runs " + describe(spec.concurrency)
                        + "; use Concurrency.unordered(n) with n >= the batch size");
            }
            String other = sources.put(spec.source, spec.id);
            if (other != null) {
                throw new MessagingConfigException("processors '" + other + "' and '" + spec.id
                        + "' share one source; each processor needs its own");
            }
        }
        log.info("waymark processing app: processors={}, inboxSize={}, failureStrategy={},"
                + " retry={}, listener={}",
                specs.stream().map(spec -> spec.id + " ("
                        + describe(spec.concurrency) + ", " + spec.source.getClass().getSimpleName() + ")")
                        .toList(),
                inboxSize, strategy, retry, listener == ProcessorListener.NONE
                        ? "none"
                        : listener.getClass().getName());
        return new ProcessingApp(this);
    }

    private static String describe(Concurrency concurrency) {
        return switch (concurrency) {
            case Concurrency.Serial serial -> "serial()";
            case Concurrency.OrderedByKey keyed -> "orderedByKey(" + keyed.parallelism() + ")";
            case Concurrency.Unordered unordered -> "unordered(" + unordered.parallelism() + ")";
        };
    }
}
