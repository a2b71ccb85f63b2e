package dev.waymark.bench;

import dev.waymark.bench.KafkaBenchmark.Meter;
import dev.waymark.kafka.KafkaCoordinates;
import dev.waymark.kafka.KafkaSource;
import dev.waymark.kafka.KafkaSourceConfig;
import dev.waymark.messaging.AckDecision;
import dev.waymark.messaging.Concurrency;
import dev.waymark.messaging.ProcessingApp;
import dev.waymark.testkit.KafkaBroker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.springframework.kafka.KafkaException;
import org.springframework.kafka.core.DefaultKafkaConsumerFactory;
import org.springframework.kafka.listener.ContainerProperties;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.kafka.listener.KafkaMessageListenerContainer;
import org.springframework.kafka.listener.MessageListener;
import org.springframework.util.backoff.FixedBackOff;

/**
 * Retries on the Kafka adapter, side by side in one run: {@code KafkaSource} serial and
 * orderedByKey(16) with a no-op handler where 0%, 1% or 10% of records answer {@code retry(0)} on
 * their first delivery, each against the same source with no retries; and Spring Kafka's listener
 * container with its default error handler ({@code DefaultErrorHandler}, one retry without back-off)
 * where the same records throw on their first delivery. Rates count records handled for good, from
 * the first to the last (group joins excluded); every run uses a fresh group over the same records.
 */
final class KafkaRetryBenchmark {

    /** A prebuilt exception: the peer's listener fails without paying for a stack trace. */
    private static final RuntimeException RETRY = new Retry();

    /** What the peer's listener throws for a record retried once. */
    private static final class Retry extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Retry() {
            super("retry", null, false, false);
        }
    }

    private KafkaRetryBenchmark() {}

    /** Records per run ({@code bench.retry.events}, default 1,000,000). */
    static int events() {
        return Integer.getInteger("bench.retry.events", 1_000_000);
    }

    /** Runs only this part, on its own topic. */
    public static void main(String[] args) throws Exception {
        BenchReport.standalone(out -> {
            String servers = KafkaBroker.get().bootstrapServers();
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, servers))) {
                admin.createTopics(List.of(new NewTopic("bench-retry", 8, (short) 1),
                        new NewTopic("bench-retry.DLT", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
            }
            KafkaBenchmark.produce(servers, "bench-retry", events());
            run(out, servers, "bench-retry", events());
        });
        System.exit(0); // the in-process broker's threads are not daemons
    }

    /** Whether the record is retried (once), for {@code percent}% of records, the same for every variant. */
    static boolean retried(int partition, long offset, int percent) {
        long h = (partition * 1_000_003L + offset) * 0x9E3779B97F4A7C15L;
        return Math.floorMod((int) (h >>> 40), 100) < percent;
    }

    /** Runs the rows into {@code out} over the first {@code count} records of {@code topic}. */
    static void run(BenchReport out, String servers, String topic, int count) throws Exception {
        int rounds = Integer.getInteger("bench.retry.rounds", 3);
        int[] percents = {0, 1, 10};
        // [variant][percent] -> rates; variants: serial, orderedByKey(16), Spring
        List<List<List<Double>>> rates = grid(percents.length);
        List<List<List<Double>>> cpuRates = grid(percents.length);
        // Warm-up of every path (JIT), not reported.
        adapter(servers, topic, Concurrency.serial(), Math.min(count, 200_000), 10);
        adapter(servers, topic, Concurrency.orderedByKey(16), Math.min(count, 100_000), 10);
        spring(servers, topic, Math.min(count, 5_000), 10);
        for (int r = 0; r < rounds; r++) {
            // A shuffled order per round (seeded): no variant always runs first, last or after the same one.
            List<Integer> order = new ArrayList<>(List.of(0, 1, 2, 3, 4, 5, 6, 7, 8));
            java.util.Collections.shuffle(order, new java.util.Random(32 + r));
            for (int i = 0; i < 9; i++) {
                int k = order.get(i);
                int v = k / 3;
                int percent = percents[k % 3];
                Meter meter = switch (v) {
                    case 0 -> adapter(servers, topic, Concurrency.serial(), count, percent);
                    case 1 -> adapter(servers, topic, Concurrency.orderedByKey(16), count, percent);
                    default -> spring(servers, topic, springCount(count, percent), percent);
                };
                double rate = meter.await();
                rates.get(v).get(k % 3).add(rate);
                cpuRates.get(v).get(k % 3).add(meter.cpuRate());
                out.progress("retry round %d: %s %d%%: %,.0f msg/s, %,.0f msg per CPU-second", r + 1,
                        v == 0 ? "serial" : v == 1 ? "keyed" : "spring", percent, rate, meter.cpuRate());
            }
        }
        out.setup("kafka retries: %,d records per run (Spring: %,d at 1%%, %,d at 10%%), %d rounds, retried once"
                + " with retry(0) (Spring: a throw, DefaultErrorHandler with FixedBackOff(0, 1)); load average"
                + " %.1f at the end", count, springCount(count, 1), springCount(count, 10), rounds,
                java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        table(out, String.format(java.util.Locale.ROOT, "no-op handler, %,d records, retried once", count), "msg/s",
                percents, rates);
        table(out, "per CPU-second of the benchmark's JVM (broker included)", "msg/CPU-s", percents, cpuRates);
        for (int v = 0; v < 3; v++) {
            out.printf("rounds (msg/s) %s: 0%% %s; 1%% %s; 10%% %s%n", v == 0
                    ? "serial"
                    : v == 1
                            ? "orderedByKey(16)"
                            : "Spring",
                    Throughput.format(rates.get(v).get(0)), Throughput.format(rates.get(v).get(1)),
                    Throughput.format(rates.get(v).get(2)));
        }
        out.println("");
        String[] names = {"KafkaSource serial", "KafkaSource orderedByKey(16)"};
        for (int v = 0; v < 2; v++) {
            out.target("32", names[v] + ", 1% retried once / no retries",
                    Throughput.pairedRatio(rates.get(v).get(1), rates.get(v).get(0)), BenchResult.Comparison.AT_LEAST,
                    0.7, "", "");
            out.target("32", names[v] + ", 10% retried once / no retries",
                    Throughput.pairedRatio(rates.get(v).get(2), rates.get(v).get(0)), BenchResult.Comparison.AT_LEAST,
                    0.3, "", "");
        }
        out.target("32", "KafkaSource serial / Spring DefaultErrorHandler, 1% retried once",
                Throughput.pairedRatio(rates.get(0).get(1), rates.get(2).get(1)), BenchResult.Comparison.AT_LEAST, 3,
                "×", "");
        out.target("32", "KafkaSource serial / Spring DefaultErrorHandler, 10% retried once",
                Throughput.pairedRatio(rates.get(0).get(2), rates.get(2).get(2)), BenchResult.Comparison.AT_LEAST, 3,
                "×", "");
    }

    /**
     * Records measured for the peer: every retry costs it a seek and a refetch (milliseconds here),
     * so its 1% and 10% runs measure 20,000 and 5,000 records (at most {@code count}), the same
     * failure pattern over a shorter stretch.
     */
    static int springCount(int count, int percent) {
        return percent == 0 ? count : Math.min(count, percent >= 10 ? 5_000 : 20_000);
    }

    /** One table: a row per failure rate, each variant's median rate and paired ratio to its 0% runs. */
    private static void table(BenchReport out, String title, String unit, int[] percents,
            List<List<List<Double>>> rates) {
        out.printf("| %s | KafkaSource serial %s | ratio to 0%% | KafkaSource orderedByKey(16) %s | ratio to 0%% |"
                + " Spring DefaultErrorHandler %s | ratio to 0%% | serial / Spring |%n", title, unit, unit, unit);
        out.println("|---|---:|---:|---:|---:|---:|---:|---:|");
        for (int p = 0; p < percents.length; p++) {
            List<Double> serial = rates.get(0).get(p);
            List<Double> keyed = rates.get(1).get(p);
            List<Double> spring = rates.get(2).get(p);
            out.printf("| %d%% of records | %,.0f | %.2f | %,.0f | %.2f | %,.0f | %.2f | %.2f× |%n", percents[p],
                    Throughput.median(serial), Throughput.pairedRatio(serial, rates.get(0).get(0)),
                    Throughput.median(keyed), Throughput.pairedRatio(keyed, rates.get(1).get(0)),
                    Throughput.median(spring), Throughput.pairedRatio(spring, rates.get(2).get(0)),
                    Throughput.pairedRatio(serial, spring));
        }
        out.println("");
    }

    private static List<List<List<Double>>> grid(int percents) {
        List<List<List<Double>>> out = new ArrayList<>();
        for (int v = 0; v < 3; v++) {
            List<List<Double>> byPercent = new ArrayList<>();
            for (int p = 0; p < percents; p++) {
                byPercent.add(new ArrayList<>());
            }
            out.add(byPercent);
        }
        return out;
    }

    /** Runs the adapter until {@code count} records were handled for good; returns its meter. */
    private static Meter adapter(String servers, String topic, Concurrency concurrency, int count, int percent)
            throws Exception {
        Meter meter = new Meter(count);
        KafkaSource source = KafkaSource.of(KafkaSourceConfig.builder(servers, KafkaBenchmark.group()).topics(topic)
                .build());
        ProcessingApp app = ProcessingApp.builder().inboxSize(1_000).processor("bench", source, concurrency, m -> {
            if (m.envelope().attempt() == 0) {
                KafkaCoordinates at = KafkaCoordinates.of(m.envelope());
                if (retried(at.partition(), at.offset(), percent)) {
                    return AckDecision.retry(Duration.ZERO);
                }
            }
            meter.hit();
            return AckDecision.ok();
        }).build().start();
        try {
            meter.await();
            return meter;
        } finally {
            app.stop();
            source.close();
        }
    }

    /** Runs the peer until {@code count} records were handled for good; returns its meter. */
    private static Meter spring(String servers, String topic, int count, int percent) throws Exception {
        Meter meter = new Meter(count);
        Set<Long> failed = ConcurrentHashMap.newKeySet();
        ContainerProperties props = new ContainerProperties(topic); // AckMode.BATCH, the default
        props.setMessageListener((MessageListener<byte[], byte[]>) record -> {
            if (retried(record.partition(), record.offset(), percent)
                    && failed.add(((long) record.partition() << 40) | record.offset())) {
                throw RETRY;
            }
            meter.hit();
        });
        var factory = new DefaultKafkaConsumerFactory<>(KafkaBenchmark.consumerProps(servers, KafkaBenchmark.group()),
                new ByteArrayDeserializer(), new ByteArrayDeserializer());
        var container = new KafkaMessageListenerContainer<>(factory, props);
        DefaultErrorHandler errors = new DefaultErrorHandler(new FixedBackOff(0L, 1L));
        errors.setLogLevel(KafkaException.Level.DEBUG); // its default ERROR line per failure is not measured
        container.setCommonErrorHandler(errors);
        container.start();
        try {
            meter.await();
            return meter;
        } finally {
            container.stop();
        }
    }
}
