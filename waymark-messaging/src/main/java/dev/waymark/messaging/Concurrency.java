package dev.waymark.messaging;

/** How a processor runs its handler. */
public sealed interface Concurrency {

    /** One message at a time, in source order; each is acknowledged before the next starts. */
    static Concurrency serial() {
        return Serial.INSTANCE;
    }

    /**
     * Up to {@code n} at once; messages with the same {@link Envelope#orderingKey()} (the same bytes)
     * are handled and acknowledged in arrival order, different keys in parallel, null keys
     * unconstrained (an empty key is a key like any other).
     */
    static Concurrency orderedByKey(int n) {
        return new OrderedByKey(n);
    }

    /** Up to {@code n} at once, in any order. */
    static Concurrency unordered(int n) {
        return new Unordered(n);
    }

    /** How many handlers may run at once. */
    int parallelism();

    /** One at a time. */
    enum Serial implements Concurrency {
        /** The only instance. */
        INSTANCE;

        @Override
        public int parallelism() {
            return 1;
        }
    }

    /** @param parallelism handlers at once, 1 to 10000 */
    record OrderedByKey(int parallelism) implements Concurrency {
        /** Validates. */
        public OrderedByKey {
            MessagingConfigException.requireParallelism(parallelism);
        }
    }

    /** @param parallelism handlers at once, 1 to 10000 */
    record Unordered(int parallelism) implements Concurrency {
        /** Validates. */
        public Unordered {
            MessagingConfigException.requireParallelism(parallelism);
        }
    }
}
