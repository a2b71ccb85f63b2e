package dev.waymark.subscription.internal;

import dev.waymark.store.EventStore;
import dev.waymark.store.GlobalPosition;
import dev.waymark.store.HeadProbe;
import dev.waymark.store.HeadWatch;
import dev.waymark.store.QueryPurpose;
import dev.waymark.store.RecordedEvent;
import dev.waymark.store.StoreException;
import dev.waymark.store.plumbing.Jdbc;
import dev.waymark.store.plumbing.Schema;
import dev.waymark.subscription.Ack;
import dev.waymark.subscription.CheckpointMissingException;
import dev.waymark.subscription.ConsumerGroupSizeMismatchException;
import dev.waymark.subscription.EventHandler;
import dev.waymark.subscription.LeaseLostException;
import dev.waymark.subscription.Subscription;
import dev.waymark.subscription.SubscriptionConfig;
import dev.waymark.subscription.SubscriptionListener;
import dev.waymark.subscription.Target;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One subscription member's loop: resolve the start, read a batch, deliver each event until it
 * is acknowledged (retrying, dead-lettering), write checkpoints, wait for new events, repeat.
 * Handlers are called one at a time, in global order.
 */
public final class SubscriptionWorker implements Subscription {

    private static final Logger log = LoggerFactory.getLogger(SubscriptionWorker.class);
    private static final Duration WAIT_SLICE = Duration.ofMillis(100);
    /** How long {@link #stop} waits, after the grace, for an interrupted handler to return. */
    private static final Duration INTERRUPTED_HANDLER_WAIT = Duration.ofSeconds(10);
    /** How long an idle reader sleeps on the head watch before it looks at its state again. */
    private static final Duration IDLE_SLICE = Duration.ofMinutes(1);

    private final EventStore store;
    private final SubscriptionConfig config;
    private final EventHandler handler;
    private final SubscriptionListener listener;
    private final CheckpointSql checkpoints;
    private final DeadLetterSql deadLetters;
    private final CountDownLatch done = new CountDownLatch(1);

    private volatile boolean stopping;
    private volatile GlobalPosition handled = GlobalPosition.START;
    private volatile Throwable failure;
    private volatile Thread thread;
    /** Delivers each event, for the run on {@link #thread} (it owns the run's handler watchdog). */
    private EventDelivery delivery;
    /** Guards {@link #idle}: stop() interrupts the thread only while it sleeps on the head watch. */
    private final Object idleLock = new Object();
    private boolean idle;

    private final CheckpointCadence cadence;
    private final StartResolver startResolver;
    private final MemberPacing pacing;

    /** A worker; call {@link #start()} to run it. */
    public SubscriptionWorker(EventStore store, SubscriptionConfig config, EventHandler handler,
            SubscriptionListener listener) {
        this.store = store;
        this.config = config;
        this.handler = handler;
        this.listener = listener;
        String q = Schema.quote(store.schema());
        this.checkpoints = new CheckpointSql(q);
        this.deadLetters = new DeadLetterSql(q);
        this.cadence = new CheckpointCadence(config.checkpoint());
        this.startResolver = new StartResolver(store, config, checkpoints);
        this.pacing = new MemberPacing(config, listener, () -> stopping);
    }

    /**
     * Resolves the start on the caller's thread, then starts the worker thread. A database failure
     * while resolving it is left to the thread, which retries it (or fails with it).
     *
     * @throws ConsumerGroupSizeMismatchException when the subscription's checkpoints were written by
     *     a group of another size; nothing is started or written
     * @throws CheckpointMissingException when the start is {@code checkpointOrFail()} and there is none
     */
    public SubscriptionWorker start() {
        GlobalPosition resolved;
        try {
            resolved = startResolver.resolve();
        } catch (ConsumerGroupSizeMismatchException | CheckpointMissingException e) {
            throw e;
        } catch (StoreException e) {
            log.warn("subscription {}: resolving the start failed, its thread retries: {}", config.memberLabel(),
                    e.toString());
            resolved = null;
        }
        GlobalPosition start = resolved;
        thread = Thread.ofPlatform().name("waymark-sub-" + config.memberLabel()).start(() -> run(start));
        return this;
    }

    @Override
    public SubscriptionConfig config() {
        return config;
    }

    @Override
    public GlobalPosition position() {
        return handled;
    }

    @Override
    public boolean isRunning() {
        return done.getCount() > 0;
    }

    @Override
    public Optional<Throwable> failure() {
        return Optional.ofNullable(failure);
    }

    @Override
    public boolean awaitTermination(Duration timeout) throws InterruptedException {
        return done.await(Durations.nanos(timeout), TimeUnit.NANOSECONDS);
    }

    @Override
    public boolean stop(Duration grace) {
        if (grace == null || grace.isNegative()) {
            throw new IllegalArgumentException("stop grace must be >= 0, got " + grace);
        }
        stopping = true;
        wakeIdle();
        try {
            if (done.await(Durations.nanos(grace), TimeUnit.NANOSECONDS)) {
                return true;
            }
            // The handler did not finish in time: interrupt it; its delivery is not acknowledged.
            Thread t = thread;
            if (t != null) {
                t.interrupt();
            }
            return done.await(INTERRUPTED_HANDLER_WAIT.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return done.getCount() == 0;
        }
    }

    private void run(GlobalPosition resolved) {
        Throwable error = null;
        HandlerWatch watch = new HandlerWatch("waymark-sub-watch-" + config.memberLabel(),
                config.stuckHandlerThreshold(), () -> stopping, new StuckHandlerReports(config, listener));
        delivery = new EventDelivery(store, config, handler, listener, checkpoints, deadLetters, cadence, pacing,
                watch, () -> stopping, this::flush, position -> handled = position);
        try {
            GlobalPosition cursor = resolved != null
                    ? resolved
                    : pacing.retrying("load checkpoint", startResolver::resolve);
            handled = cursor;
            cadence.startAt(cursor); // the interval counts from the start, not from construction
            pacing.safely(() -> listener.started(config, cursor));
            loop(cursor);
        } catch (InterruptedException e) {
            if (stopping) {
                log.debug("subscription {} interrupted while stopping", config.memberLabel());
            } else {
                // only stop() interrupts this thread, after setting stopping: any other interrupt is a failure
                error = e;
                failure = e;
                log.error("subscription {} stopped on an interrupt it was not asked for", config.memberLabel(), e);
            }
        } catch (LeaseLostException e) {
            // expected in a pool (a takeover after a pause, a rebalance): one line, with the state
            error = e;
            failure = e;
            log.warn("subscription {} stops: {}", config.memberLabel(), e.getMessage());
        } catch (Throwable e) {
            error = e;
            failure = e;
            log.error("subscription {} stopped on an error", config.memberLabel(), e);
        } finally {
            watch.close();
            if (!(error instanceof LeaseLostException)) {
                flushQuietly();
            }
            Throwable reported = error;
            try {
                pacing.safely(() -> listener.stopped(config, handled, reported));
            } finally {
                done.countDown(); // even past a listener's Error: stop() and awaitTermination rely on it
            }
        }
    }

    private void loop(GlobalPosition start) throws InterruptedException {
        GlobalPosition cursor = start;
        boolean caughtUp = true; // until a page comes back full
        HeadWatch watch = store.headWatch();
        while (!stopping) {
            // Taken before the page (a probe is published before it is read here), so that every
            // event visible when it was taken is in the page, or another member's, or past the page.
            HeadProbe before = caughtUp ? watch.latest() : null;
            GlobalPosition from = cursor;
            List<RecordedEvent> batch = pacing.retrying("read events", () -> read(from));
            for (RecordedEvent event : batch) {
                if (stopping) {
                    return;
                }
                if (config.eventTypes().isEmpty() || config.eventTypes().contains(event.type())) {
                    delivery.deliver(event);
                }
                handled = event.position();
                cursor = event.position();
                if (cadence.passed()) {
                    flush();
                }
            }
            boolean wasCaughtUp = caughtUp;
            caughtUp = batch.size() < config.batchSize();
            if (caughtUp) {
                GlobalPosition bound = before == null || before.sequence() == 0 ? null : before.horizon();
                if (!config.partition().isWhole() && bound != null && bound.isAfter(cursor)) {
                    // No event of this member's is left below the horizon the probe saw before the page:
                    // the next page starts there instead of walking the other members' events again
                    // (saved with the cadence).
                    cursor = bound;
                    handled = bound;
                }
                if (cadence.hasUnsaved() || (cadence.dueByTime() && cadence.isAhead(handled))) {
                    flush();
                }
                GlobalPosition caughtUpAt = cursor;
                pacing.safely(() -> listener.caughtUp(config, caughtUpAt));
                if (wasCaughtUp) { // else the end of a catch-up: one more page, behind a probe, first
                    awaitHeadPast(watch, before);
                }
            }
        }
    }

    /**
     * Waits, without a query of its own, until a probe of the store's head shows an event past
     * {@code before}'s head: the page read after {@code before} saw every event up to that head, and
     * any event that becomes visible later lies past it. A wake of the store (an append, a NOTIFY)
     * makes the watch probe; so does its fallback tick, and this reader's own poll interval passing
     * when it is shorter than the watch's (asking for a probe the watch runs anyway would only
     * double it). The thread sleeps on the watch until the head moves: probes that find nothing new
     * do not wake it, and {@link #stop} interrupts it (see {@link #wakeIdle()}).
     */
    private void awaitHeadPast(HeadWatch watch, HeadProbe before) throws InterruptedException {
        boolean ask = config.pollInterval().compareTo(watch.probeInterval()) < 0;
        Duration slice = ask ? config.pollInterval() : IDLE_SLICE;
        synchronized (idleLock) {
            if (stopping) {
                return;
            }
            idle = true;
        }
        try {
            while (!stopping) {
                if (watch.awaitHeadPast(before.head(), slice).head().isAfter(before.head())) {
                    return;
                }
                if (ask) {
                    watch.request();
                }
            }
        } catch (InterruptedException e) {
            if (!stopping) {
                throw e; // not stop()'s: a failure, as anywhere else
            }
        } finally {
            synchronized (idleLock) {
                idle = false;
            }
            if (stopping) {
                Thread.interrupted(); // stop()'s wake, which may land after the wait ended: not for the final flush
            }
        }
    }

    /** Interrupts the thread if it sleeps in {@link #awaitHeadPast}, and only there. */
    private void wakeIdle() {
        synchronized (idleLock) {
            Thread t = thread;
            if (idle && t != null) {
                t.interrupt();
            }
        }
    }

    private List<RecordedEvent> read(GlobalPosition from) {
        return switch (config.target()) {
            case Target.All all -> store.readAllForward(from, config.batchSize(), config.partition());
            case Target.Category category ->
                store.readCategoryForward(category.name(), from, config.batchSize(), config.partition());
        };
    }

    private void flush() {
        GlobalPosition position = handled;
        if (!cadence.isAhead(position)) {
            cadence.upToDate();
            return;
        }
        try {
            Jdbc.autocommit(store, QueryPurpose.CHECKPOINT, "save checkpoint of " + config.memberLabel(),
                    c -> checkpoints.save(c, config.name(), config.partition(), position, config.fence()));
            cadence.written(position);
            pacing.safely(() -> listener.checkpointed(config, position));
        } catch (LeaseLostException e) {
            throw e;
        } catch (StoreException e) {
            // Progress is replayed from the last checkpoint after a restart; keep going.
            log.warn("subscription {}: checkpoint save failed, will retry: {}", config.memberLabel(), e.toString());
            pacing.safely(() -> listener.failed(config, e));
        }
    }

    private void flushQuietly() {
        try {
            if (cadence.isAhead(handled)) {
                flush();
            }
        } catch (RuntimeException e) {
            log.warn("subscription {}: final checkpoint save failed: {}", config.memberLabel(), e.toString());
        }
    }
}
