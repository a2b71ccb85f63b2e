package dev.waymark.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/** Runs an operation from N threads for a fixed time and reports operations per second. */
final class Throughput {

    /** One operation; returns how many events it wrote. */
    @FunctionalInterface
    interface Op {
        int run(int thread, long iteration) throws Exception;
    }

    private Throughput() {}

    /** The median of the values (the upper one of an even count). */
    static double median(List<Double> values) {
        double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        return sorted[sorted.length / 2];
    }

    /**
     * The median over rounds of {@code rates[i] / baseline[i]}: both sides of each ratio ran in the
     * same round, moments apart, so a shared machine that slows down or speeds up between rounds
     * moves both sides of a ratio instead of one side of a ratio of medians.
     */
    static double pairedRatio(List<Double> rates, List<Double> baseline) {
        if (rates.size() != baseline.size() || rates.isEmpty()) {
            throw new IllegalArgumentException("paired ratio needs as many rates as baseline rates, at least one: "
                    + rates.size() + " and " + baseline.size());
        }
        List<Double> ratios = new ArrayList<>();
        for (int round = 0; round < rates.size(); round++) {
            ratios.add(rates.get(round) / baseline.get(round));
        }
        return median(ratios);
    }

    /** Rates of the rounds, in order, as {@code [1,234, 5,678]}. */
    static String format(List<Double> rates) {
        return rates.stream().map(v -> String.format(java.util.Locale.US, "%,.0f", v)).toList().toString();
    }

    /** The {@code p}-quantile (0..1) of sorted values, nearest rank. */
    static long percentile(long[] sorted, double p) {
        return sorted[Math.min(sorted.length - 1, (int) Math.floor(p * sorted.length))];
    }

    /** {@code op}, adding the nanoseconds of each call to {@code latencies}. */
    static Op timed(Op op, java.util.Queue<Long> latencies) {
        return (thread, i) -> {
            long start = System.nanoTime();
            int n = op.run(thread, i);
            latencies.add(System.nanoTime() - start);
            return n;
        };
    }

    static double measure(int threads, Duration duration, Op op) throws InterruptedException {
        LongAdder events = new LongAdder();
        AtomicBoolean stop = new AtomicBoolean();
        CountDownLatch done = new CountDownLatch(threads);
        List<Throwable> errors = new ArrayList<>();
        List<Thread> workers = new ArrayList<>();
        long start = System.nanoTime();
        for (int t = 0; t < threads; t++) {
            int thread = t;
            workers.add(Thread.ofPlatform().name("bench-" + t).start(() -> {
                try {
                    for (long i = 0; !stop.get(); i++) {
                        events.add(op.run(thread, i));
                    }
                } catch (Throwable e) {
                    synchronized (errors) {
                        errors.add(e);
                    }
                } finally {
                    done.countDown();
                }
            }));
        }
        Thread.sleep(duration.toMillis());
        stop.set(true);
        done.await();
        long elapsed = System.nanoTime() - start;
        if (!errors.isEmpty()) {
            throw new IllegalStateException("benchmark operation failed", errors.get(0));
        }
        return events.sum() / (elapsed / 1e9);
    }
}
