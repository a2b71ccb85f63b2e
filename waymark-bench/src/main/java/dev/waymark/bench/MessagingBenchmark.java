package dev.waymark.bench;

import dev.waymark.messaging.AckDecision;
import dev.waymark.messaging.AckHandle;
import dev.waymark.messaging.Concurrency;
import dev.waymark.messaging.Envelope;
import dev.waymark.messaging.Handler;
import dev.waymark.messaging.Ingested;
import dev.waymark.messaging.Message;
import dev.waymark.messaging.MessageSource;
import dev.waymark.messaging.ProcessingApp;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * The messaging runtime with an in-memory source, side by side in one run: serial processing of a
 * no-op handler against a bare loop calling the same handler and ack; and orderedByKey(16) against
 * serial with a 2 ms handler over 1,000 keys. No database.
 */
public final class MessagingBenchmark {

    private MessagingBenchmark() {}

    /** Distinct pre-built messages a source holds; a longer run delivers them again in turn. */
    private static final int DISTINCT = 1 << 16;

    /** Rounds of the no-op variants (at least; more if {@code bench.rounds} asks for more). */
    private static final int NOOP_ROUNDS = 21;

    /** Unrecorded runs of each no-op variant before the rounds. */
    private static final int WARM_UP_RUNS = 6;

    /**
     * {@code count} deliveries of a pre-built array of messages, cycling through it (so a run of
     * tens of millions needs no gigabytes of messages); acknowledgements only count.
     */
    private static final class ArraySource implements MessageSource {
        private final Ingested[] messages;
        private final int count;
        private final AtomicInteger next = new AtomicInteger();

        ArraySource(int count, int keys, LongAdder acked) {
            AckHandle ack = decision -> acked.increment();
            this.count = count;
            messages = new Ingested[Math.min(count, DISTINCT)];
            byte[] payload = "{\"order\":42}".getBytes(java.nio.charset.StandardCharsets.UTF_8);
            for (int i = 0; i < messages.length; i++) {
                messages[i] = Ingested.of(Envelope.builder("m" + i, payload).orderingKey("k" + (i % keys)).build(),
                        ack);
            }
        }

        @Override
        public String name() {
            return "array";
        }

        @Override
        public Optional<Ingested> poll(Duration timeout) {
            int i = next.getAndIncrement();
            return i < count ? Optional.of(messages[i % messages.length]) : Optional.empty();
        }

        @Override
        public boolean isFinished() {
            return next.get() >= count;
        }

        @Override
        public void shutdown() {
            next.set(count);
        }
    }

    /** Runs the benchmark and prints markdown tables. */
    public static void main(String[] args) throws Exception {
        BenchReport.standalone(MessagingBenchmark::run);
    }

    /** Runs the benchmark into {@code out}. */
    static void run(BenchReport out) throws Exception {
        int rounds = Integer.getInteger("bench.rounds", 5);
        int count = 5_000_000;
        // Runs of a no-op handler last a tenth of a second: many of them, so that the median pair is
        // not one the compiler or the collector happened to interrupt.
        int noopRounds = Math.max(rounds, NOOP_ROUNDS);
        Handler noop = m -> AckDecision.ok();
        // Warm-up. Each run ends on the branch where the source is finished, which the compiled loop
        // had never taken: its code is thrown away and compiled again, and it takes a few runs until
        // the compiled code covers that exit (without this the first two rounds ran at a third of
        // the speed of the rest).
        for (int w = 0; w < WARM_UP_RUNS; w++) {
            runtime(count, 1000, Concurrency.serial(), noop);
            bare(count, noop);
        }
        List<Double> bare = new ArrayList<>();
        List<Double> serial = new ArrayList<>();
        for (int r = 0; r < noopRounds; r++) {
            // Alternating which goes first, so neither always runs on the other's garbage.
            if (r % 2 == 0) {
                bare.add(bare(count, noop));
                serial.add(runtime(count, 1000, Concurrency.serial(), noop));
            } else {
                serial.add(runtime(count, 1000, Concurrency.serial(), noop));
                bare.add(bare(count, noop));
            }
        }
        out.setup("messaging benchmark: %d cores, in-memory source; %d round(s) (no-op handler: %d after %d"
                + " warm-up runs), rates: median of rounds; ratios: median of per-round ratios",
                Runtime.getRuntime().availableProcessors(), rounds, noopRounds, WARM_UP_RUNS);
        double noopRatio = Throughput.pairedRatio(serial, bare);
        out.printf("| no-op handler, %,d messages | msg/s (median of %d) | ratio |%n", count, noopRounds);
        out.println("|---|---:|---:|");
        out.printf("| bare loop (handler + ack) | %,.0f | 1.00 |%n", Throughput.median(bare));
        out.printf("| runtime, serial | %,.0f | %.2f |%n%n", Throughput.median(serial), noopRatio);
        out.printf("rounds (msg/s): bare %s; serial %s. Ratio of the medians: %.2f.%n%n", Throughput.format(bare),
                Throughput.format(serial), Throughput.median(serial) / Throughput.median(bare));
        out.target("7", "serial runtime / bare loop, no-op handler", noopRatio,
                BenchResult.Comparison.AT_LEAST, 0.8, "", "");

        Handler tenMicros = m -> {
            long until = System.nanoTime() + 10_000;
            while (System.nanoTime() < until) {
                Thread.onSpinWait(); // 10 µs of CPU work
            }
            return AckDecision.ok();
        };
        int medium = 200_000;
        List<Double> bare10 = new ArrayList<>();
        List<Double> serial10 = new ArrayList<>();
        for (int r = 0; r < rounds; r++) {
            bare10.add(bare(medium, tenMicros));
            serial10.add(runtime(medium, 1000, Concurrency.serial(), tenMicros));
        }
        out.printf("| 10 µs CPU handler, %,d messages | msg/s (median of %d) | ratio |%n", medium, rounds);
        out.println("|---|---:|---:|");
        out.printf("| bare loop (handler + ack) | %,.0f | 1.00 |%n", Throughput.median(bare10));
        out.printf("| runtime, serial | %,.0f | %.2f |%n%n", Throughput.median(serial10),
                Throughput.pairedRatio(serial10, bare10));

        Handler twoMs = m -> {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
            return AckDecision.ok();
        };
        int slow = 2_000;
        double s = runtime(slow, 1000, Concurrency.serial(), twoMs);
        double k = runtime(slow * 8, 1000, Concurrency.orderedByKey(16), twoMs);
        out.printf("| 2 ms handler, 1,000 keys | msg/s | ratio |%n");
        out.println("|---|---:|---:|");
        out.printf("| serial (%,d messages) | %,.0f | 1.00 |%n", slow, s);
        out.printf("| orderedByKey(16) (%,d messages) | %,.0f | %.2f |%n", slow * 8, k, k / s);
        out.target("7", "orderedByKey(16) / serial, 2 ms handler, 1,000 keys", k / s, BenchResult.Comparison.AT_LEAST,
                10, "×", "");
    }

    private static double bare(int count, Handler handler) throws Exception {
        LongAdder acked = new LongAdder();
        ArraySource source = new ArraySource(count, 1000, acked);
        long start = System.nanoTime();
        for (Optional<Ingested> next; (next = source.poll(Duration.ZERO)).isPresent();) {
            Ingested i = next.get();
            AckDecision d = handler.handle(new Message(i.envelope(), Optional.empty()));
            i.ack().finalize(d);
        }
        return count / ((System.nanoTime() - start) / 1e9);
    }

    private static double runtime(int count, int keys, Concurrency concurrency, Handler handler) throws Exception {
        LongAdder acked = new LongAdder();
        ArraySource source = new ArraySource(count, keys, acked);
        long start = System.nanoTime();
        ProcessingApp app = ProcessingApp.builder().inboxSize(1000).processor("bench", source, concurrency, handler)
                .build().start();
        if (!app.awaitTermination(Duration.ofMinutes(10))) {
            throw new IllegalStateException("benchmark did not finish");
        }
        double rate = count / ((System.nanoTime() - start) / 1e9);
        if (acked.sum() != count) {
            throw new IllegalStateException("acknowledged " + acked.sum() + " of " + count);
        }
        return rate;
    }
}
