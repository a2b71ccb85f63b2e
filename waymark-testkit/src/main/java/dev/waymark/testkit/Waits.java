package dev.waymark.testkit;

import java.time.Duration;

/** How long a test waits for something asynchronous before it fails: one bound for every Waymark test. */
public final class Waits {

    /**
     * The upper bound of a wait for an asynchronous outcome (a delivery, a workflow's end, a lease
     * changing hands): generous, because it only matters when the outcome never comes, and a test
     * that passes returns as soon as the outcome is there. Never a time the test must sit through.
     */
    public static final Duration WAIT = Duration.ofSeconds(60);

    private Waits() {}
}
