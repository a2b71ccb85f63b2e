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

    /** Records per run ({@code bench.retry.events}, default 200,000). */
    static int events() {
        return Integer.getInteger("bench.retry.events", 200_000);
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
        List<List<List<Double>>> rates = new ArrayList<>();
        for (int v = 0; v < 3; v++) {
            List<List<Double>> byPercent = new ArrayList<>();
            for (int p = 0; p < percents.length; p++) {
                byPercent.add(new ArrayList<>());
            }
            rates.add(byPercent);
        }
        adapter(servers, topic, Concurrency.serial(), Math.min(count, 50_000), 10); // warm-up, not reported
        spring(servers, topic, Math.min(count, 20_000), 10);
        for (int r = 0; r < rounds; r++) {
            for (int i = 0; i < 9; i++) {
                int k = (r * 4 + i) % 9; // a rotating order: no variant always runs first or last
                int v = k / 3;
                int percent = percents[k % 3];
                double rate = switch (v) {
                    case 0 -> adapter(servers, topic, Concurrency.serial(), count, percent);
                    case 1 -> adapter(servers, topic, Concurrency.orderedByKey(16), count, percent);
                    default -> spring(servers, topic, count, percent);
                };
                rates.get(v).get(k % 3).add(rate);
                out.progress("retry round %d: %s %d%%: %,.0f msg/s", r + 1, v == 0 ? "serial" : v == 1 ? "keyed"
                        : "spring", percent, rate);
            }
        }
        out.setup("kafka retries: %,d records per run, %d rounds, retried once with retry(0) (Spring: a throw,"
                + " DefaultErrorHandler with FixedBackOff(0, 1))", count, rounds);
        out.printf("| no-op handler, %,d records, retried once | KafkaSource serial msg/s | ratio to 0%% |"
                + " KafkaSource orderedByKey(16) msg/s | ratio to 0%% | Spring DefaultErrorHandler msg/s |"
                + " ratio to 0%% | serial / Spring |%n", count);
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
        for (int v = 0; v < 3; v++) {
            out.printf("rounds (msg/s) %s: 0%% %s; 1%% %s; 10%% %s%n", v == 0 ? "serial" : v == 1 ? "orderedByKey(16)"
                    : "Spring", Throughput.format(rates.get(v).get(0)), Throughput.format(rates.get(v).get(1)),
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

    private static double adapter(String servers, String topic, Concurrency concurrency, int count, int percent)
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
            return meter.await();
        } finally {
            app.stop();
            source.close();
        }
    }

    private static double spring(String servers, String topic, int count, int percent) throws Exception {
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
            return meter.await();
        } finally {
            container.stop();
        }
    }
}
