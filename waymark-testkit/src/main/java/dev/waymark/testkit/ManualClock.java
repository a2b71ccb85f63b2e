package dev.waymark.testkit;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicReference;

/** A clock that moves only when told to, for tests of time-dependent code without sleeping. Thread-safe. */
public final class ManualClock extends Clock {

    private final AtomicReference<Instant> now;
    private final ZoneId zone;

    /** A clock at {@code start}, in UTC. */
    public ManualClock(Instant start) {
        this(new AtomicReference<>(start), ZoneOffset.UTC);
    }

    private ManualClock(AtomicReference<Instant> now, ZoneId zone) {
        this.now = now;
        this.zone = zone;
    }

    /** A clock at the current system time, in UTC. */
    public static ManualClock startingNow() {
        return new ManualClock(Instant.now());
    }

    /** Moves the clock forward (or back, for a negative amount). */
    public void advance(Duration amount) {
        now.updateAndGet(t -> t.plus(amount));
    }

    /** Sets the clock. */
    public void set(Instant instant) {
        now.set(instant);
    }

    @Override
    public ZoneId getZone() {
        return zone;
    }

    /** The same clock seen in another zone; both move together. */
    @Override
    public Clock withZone(ZoneId zone) {
        return new ManualClock(now, zone);
    }

    @Override
    public Instant instant() {
        return now.get();
    }
}
