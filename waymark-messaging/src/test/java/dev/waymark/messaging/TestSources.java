package dev.waymark.messaging;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntPredicate;

/** Sources with injected faults, wrapping an {@link InMemorySource}. */
final class TestSources {

    private TestSources() {}

    /** Finalization throws on the calls {@code failOnCall} accepts (counted from 1 across the source). */
    static MessageSource failingAcks(InMemorySource delegate, AtomicInteger calls, IntPredicate failOnCall) {
        return new Wrapped(delegate) {
            @Override
            public Optional<Ingested> poll(Duration timeout) throws InterruptedException {
                return delegate.poll(timeout).map(i -> Ingested.of(i.envelope(), decision -> {
                    if (failOnCall.test(calls.incrementAndGet())) {
                        throw new IllegalStateException("broker unavailable");
                    }
                    i.ack().finalize(decision);
                }));
            }
        };
    }

    /** The poll after {@code healthyPolls} successful messages throws, counting {@code failed} down first. */
    static MessageSource failingAfter(InMemorySource delegate, int healthyPolls,
            java.util.concurrent.CountDownLatch failed) {
        AtomicInteger polls = new AtomicInteger();
        return new Wrapped(delegate) {
            @Override
            public Optional<Ingested> poll(Duration timeout) throws InterruptedException {
                if (polls.get() >= healthyPolls) {
                    failed.countDown();
                    throw new IllegalStateException("connection reset by broker");
                }
                Optional<Ingested> next = delegate.poll(timeout);
                next.ifPresent(n -> polls.incrementAndGet());
                return next;
            }
        };
    }

    /** shutdown() throws (after recording the call). */
    static MessageSource failingShutdown(InMemorySource delegate) {
        return new Wrapped(delegate) {
            @Override
            public void shutdown() {
                delegate.shutdown();
                throw new IllegalStateException("cannot close consumer");
            }
        };
    }

    /** Counts in {@code starts} how often a processor starts on it ({@code processedWith} comes once per start). */
    static MessageSource countingStarts(InMemorySource delegate, AtomicInteger starts) {
        return new Wrapped(delegate) {
            @Override
            public void processedWith(Concurrency concurrency) {
                starts.incrementAndGet();
            }
        };
    }

    private static class Wrapped implements MessageSource {
        final InMemorySource delegate;

        Wrapped(InMemorySource delegate) {
            this.delegate = delegate;
        }

        @Override
        public String name() {
            return delegate.name();
        }

        @Override
        public Optional<Ingested> poll(Duration timeout) throws Exception {
            return delegate.poll(timeout);
        }

        @Override
        public boolean isFinished() {
            return delegate.isFinished();
        }

        @Override
        public void shutdown() throws Exception {
            delegate.shutdown();
        }
    }
}
