package dev.waymark.messaging.internal;

import dev.waymark.core.RetryPolicy;
import dev.waymark.messaging.Concurrency;
import dev.waymark.messaging.Handler;
import dev.waymark.messaging.Ingested;
import dev.waymark.messaging.MessageSource;
import dev.waymark.messaging.ProcessorFailedException;
import dev.waymark.messaging.ProcessorListener;
import dev.waymark.messaging.ProcessorState;
import dev.waymark.messaging.ProcessorState.Lifecycle;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One processor: an ingester thread pulls the source into a bounded inbox (blocking when full), a
 * loop thread takes from the inbox and dispatches to the handler under the concurrency mode, and
 * every message is finalized through its ack handle with bounded retries.
 */
public final class ProcessorRuntime {

    private static final Logger log = LoggerFactory.getLogger(ProcessorRuntime.class);
    private static final Duration POLL = Duration.ofMillis(50);
    private static final int BATCH = 64;

    private final String id;
    private final MessageSource source;
    private final Concurrency concurrency;
    private final boolean inline;
    private final BlockingQueue<Ingested> inbox;
    private final ExecutorService executor;
    private final Dispatcher dispatcher;
    private final Consumer<ProcessorRuntime> onFailure;
    private final CountDownLatch done = new CountDownLatch(1);
    private final CountDownLatch ingesterDone = new CountDownLatch(1);

    private final ProcessorCounters counters;
    private final MessageHandling handling;

    /** Closed by a forced stop, so no finalizer runs after it. */
    private final FinalizeGate finalizing;

    private final StuckCheck stuck = new StuckCheck();
    private final SourceShutdown sourceShutdown;
    private volatile Throwable sourceFailure;
    private volatile Lifecycle lifecycle = Lifecycle.STARTING;
    private volatile String halt;
    private volatile ProcessorFailedException failure;
    private volatile boolean forced;
    private volatile Thread ingester;
    private volatile Thread loop;

    /** A processor, not started. */
    public ProcessorRuntime(String id, MessageSource source, Concurrency concurrency, Handler handler, int inboxSize,
            RetryPolicy retry, ProcessorListener listener, Consumer<ProcessorRuntime> onFailure) {
        this.id = id;
        this.source = source;
        this.sourceShutdown = new SourceShutdown(id, source);
        this.concurrency = concurrency;
        this.inbox = new ArrayBlockingQueue<>(inboxSize);
        this.onFailure = onFailure;
        this.inline = concurrency instanceof Concurrency.Serial;
        this.finalizing = inline ? FinalizeGate.singleThread() : FinalizeGate.manyThreads();
        this.counters = new ProcessorCounters(inline);
        this.handling = new MessageHandling(id, handler, listener, retry, finalizing, counters, new Host());
        this.executor = inline
                ? null
                : Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("waymark-" + id + "-", 0).factory());
        this.dispatcher = switch (concurrency) {
            case Concurrency.Serial s -> new SerialDispatcher(this::processOne);
            case Concurrency.Unordered u -> new UnorderedDispatcher(this::processOne, executor, u.parallelism());
            case Concurrency.OrderedByKey k -> new KeyedDispatcher(this::processOne, executor, k.parallelism());
        };
    }

    /** The processor's id. */
    public String id() {
        return id;
    }

    /** The source. */
    public MessageSource source() {
        return source;
    }

    /** Starts the ingester and the loop. */
    public void start() {
        source.processedWith(concurrency); // before the first poll: what a retry must hold back
        lifecycle = Lifecycle.RUNNING;
        if (inline) {
            ingesterDone.countDown(); // no ingester: the loop pulls the source itself
            loop = Thread.ofPlatform().name("waymark-process-" + id).start(this::runInline);
            return;
        }
        ingester = Thread.ofPlatform().name("waymark-ingest-" + id).start(this::ingest);
        loop = Thread.ofPlatform().name("waymark-process-" + id).start(this::run);
    }

    /**
     * Serial processing on one thread: pull, handle, finalize, repeat. A serial processor has one
     * message in flight anyway, so an inbox would only add a thread hand-off per message.
     */
    private void runInline() {
        try {
            while (!terminal() && !source.isFinished()) {
                Optional<Ingested> next;
                try {
                    next = source.poll(POLL);
                } catch (InterruptedException e) {
                    throw e;
                } catch (Exception e) {
                    sourceFailure = e;
                    break;
                }
                if (next.isPresent()) {
                    counters.count(counters.received);
                    dispatcher.dispatch(next.get());
                }
            }
            Throwable sourceError = sourceFailure;
            if (sourceError != null && !forced) {
                fail(null, "source '" + source.name() + "' failed", sourceError);
            }
        } catch (InterruptedException e) {
            interrupted(e);
        } catch (RuntimeException | Error e) {
            fail(null, "processor loop failed", e); // never a silent STOPPED
            throw e;
        } finally {
            ended();
        }
    }

    /**
     * The processor has ended: records how, lets the source go and only then counts as done. A
     * failed processor shuts its source down at once (whatever the strategy) rather than leaving it
     * running until the app stops: a Kafka consumer would keep its partitions from the rest of its
     * group. Nothing handed out is acknowledged after this, which the source is told too.
     */
    private void ended() {
        lifecycle = failure != null ? Lifecycle.FAILED : halt != null ? Lifecycle.HALTED : Lifecycle.STOPPED;
        try {
            try {
                source.processorEnded();
            } catch (RuntimeException e) {
                log.warn("processor {}: source {} failed on processorEnded: {}", id, source.name(), e.toString());
            }
            if (failure != null) {
                shutdownSource();
                onFailure.accept(this);
            }
        } finally {
            done.countDown();
        }
    }

    /**
     * Calls the source's {@code shutdown()} unless it was called already (by a stop, or when the
     * processor failed): once per processor. Waits for that one call if it is running.
     *
     * @return the failure of that call, or null
     */
    public Exception shutdownSource() {
        return sourceShutdown.run();
    }

    /**
     * The loop thread was interrupted. Only a forced stop interrupts it; any other interrupt fails
     * the processor rather than ending it as if stopped (its source would keep what it holds).
     */
    private void interrupted(InterruptedException e) {
        if (!forced) {
            fail(null, "processor thread interrupted outside a forced stop", e);
        }
        Thread.currentThread().interrupt();
    }

    /** A {@link VirtualMachineError} other than a stack overflow: the process, not a handler, is broken. */
    static boolean fatal(Throwable t) {
        return t instanceof VirtualMachineError && !(t instanceof StackOverflowError);
    }

    private boolean terminal() {
        return halt != null || failure != null || forced;
    }

    private void ingest() {
        try {
            while (!terminal() && !source.isFinished()) {
                Optional<Ingested> next = source.poll(POLL);
                if (next.isPresent()) {
                    counters.received.incrementAndGet(); // the ingester is the only writer, but it is not the loop
                    inbox.put(next.get()); // blocks while the inbox is full: backpressure
                }
            }
        } catch (InterruptedException e) {
            if (!terminal()) {
                sourceFailure = e; // only the loop (once terminal) and a forced stop interrupt the ingester
            }
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            // Not terminal for the loop: what was already taken is drained and finalized first.
            sourceFailure = e;
        } catch (Error e) {
            sourceFailure = e;
            if (fatal(e)) {
                throw e;
            }
        } finally {
            ingesterDone.countDown();
        }
    }

    private void run() {
        try {
            List<Ingested> batch = new ArrayList<>(BATCH);
            while (!terminal()) {
                Ingested next = inbox.poll(POLL.toNanos(), TimeUnit.NANOSECONDS);
                if (next == null) {
                    if (ingesterDone.getCount() == 0 && inbox.isEmpty()) {
                        break;
                    }
                    continue;
                }
                dispatcher.dispatch(next);
                // Take what else is waiting in one go: one lock round per batch instead of per message.
                // If a halt or failure arrives mid-batch, the rest stays unfinalized, as in the inbox.
                batch.clear();
                inbox.drainTo(batch, BATCH);
                for (int i = 0; i < batch.size() && !terminal(); i++) {
                    dispatcher.dispatch(batch.get(i));
                }
            }
            dispatcher.awaitIdle();
            if (terminal()) {
                Thread t = ingester;
                if (t != null) {
                    t.interrupt(); // it may be blocked on a full inbox; what is left there is not finalized
                }
            }
            ingesterDone.await();
            Throwable sourceError = sourceFailure;
            if (sourceError != null && !forced) {
                fail(null, "source '" + source.name() + "' failed", sourceError);
            }
        } catch (InterruptedException e) {
            interrupted(e);
        } catch (RejectedExecutionException e) {
            if (!forced) { // a forced stop shuts the executor down under a dispatch: that is the stop
                fail(null, "processor loop failed", e);
                throw e;
            }
        } catch (RuntimeException | Error e) {
            fail(null, "processor loop failed", e);
            throw e;
        } finally {
            if (executor != null) {
                executor.shutdown();
            }
            ended();
        }
    }

    /**
     * Handles and finalizes one message. What escapes it (a fatal {@link VirtualMachineError}, or a
     * bug) fails the processor before it propagates; the dispatchers release what they hold.
     */
    private void processOne(Ingested message) {
        try {
            handling.handleAndFinalize(message);
        } catch (RuntimeException | Error e) {
            fail(message.envelope().messageId(), "processing failed", e);
            throw e;
        }
    }

    private synchronized void fail(String messageId, String what, Throwable cause) {
        if (failure == null) { // the first failure wins, and a failure overrides a halt
            failure = new ProcessorFailedException(id, messageId, what + ": " + cause, cause);
            log.error("processor {} failed{}: {}", id, messageId != null ? " on " + messageId : "", cause.toString());
        }
    }

    /**
     * Ends a processor that was never started (its app stopped first): it counts as stopped, its
     * source is told it ended, and it never polls. Not to be called with or after {@link #start()}.
     */
    public void endUnstarted() {
        ingesterDone.countDown();
        if (executor != null) {
            executor.shutdown();
        }
        ended();
    }

    /** Marks the processor draining (its source is being shut down). */
    public void draining() {
        if (lifecycle == Lifecycle.RUNNING) {
            lifecycle = Lifecycle.DRAINING;
        }
    }

    /** Waits for the processor to end. */
    public boolean awaitDone(Duration timeout) throws InterruptedException {
        return done.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** Whether it ended. */
    public boolean isDone() {
        return done.getCount() == 0;
    }

    /** Forced stop: no finalizer runs after this returns; handlers are interrupted. */
    public void forceStop() {
        forced = true;
        Thread i = ingester;
        Thread l = loop;
        if (i != null) {
            i.interrupt();
        }
        if (l != null) {
            l.interrupt();
        }
        if (executor != null) {
            executor.shutdownNow();
        }
        finalizing.close(); // waits for finalizers already running
    }

    /**
     * Whether it has work pending (in flight, in its inbox, or retried) but finalized nothing for
     * good (ok, dead letter) for {@code after}: a handler or an acknowledgement hangs, or a message
     * is retried again and again. Retries alone are not progress. See {@link StuckCheck}.
     */
    public boolean isStuck(Duration after) {
        return stuck.isStuck(counters.finalizedForGood(), counters.retried.get(),
                dispatcher.inFlight() > 0 || !inbox.isEmpty(), lifecycle == Lifecycle.RUNNING, after);
    }

    /** Its failure, or null. */
    public ProcessorFailedException failure() {
        return failure;
    }

    /** A snapshot. */
    public ProcessorState snapshot() {
        ProcessorFailedException f = failure;
        long retries = counters.retried.get();
        return new ProcessorState(id, lifecycle, counters.received.get(), counters.succeeded.get() + retries,
                counters.failed.get(), retries, counters.deadLettered.get(), dispatcher.inFlight(), inbox.size(),
                f != null ? f.getMessage() : halt, f != null ? f.messageId() : null);
    }

    /** What the per-message step sees of this processor. */
    private final class Host implements MessageHandling.Host {
        @Override
        public boolean terminal() {
            return ProcessorRuntime.this.terminal();
        }

        @Override
        public boolean forced() {
            return forced;
        }

        @Override
        public void fail(String messageId, String what, Throwable cause) {
            ProcessorRuntime.this.fail(messageId, what, cause);
        }

        @Override
        public void halted(String messageId, String reason) {
            if (failure == null && halt == null) {
                halt = reason;
                log.info("processor {} halted by message {}: {}", id, messageId, reason);
            }
        }
    }
}
