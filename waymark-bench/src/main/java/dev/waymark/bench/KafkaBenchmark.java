package dev.waymark.bench;

import dev.waymark.kafka.KafkaSource;
import dev.waymark.kafka.KafkaSourceConfig;
import dev.waymark.kafka.KafkaSourceConfigBuilder;
import dev.waymark.messaging.AckDecision;
import dev.waymark.messaging.Concurrency;
import dev.waymark.messaging.Handler;
import dev.waymark.messaging.ProcessingApp;
import dev.waymark.testkit.KafkaBroker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.springframework.kafka.core.DefaultKafkaConsumerFactory;
import org.springframework.kafka.listener.AcknowledgingMessageListener;
import org.springframework.kafka.listener.ContainerProperties;
import org.springframework.kafka.listener.KafkaMessageListenerContainer;
import org.springframework.kafka.listener.MessageListener;

/**
 * The Kafka adapter on the in-process broker, side by side in one run: a no-op handler through
 * {@code KafkaSource} against a raw {@code KafkaConsumer} poll loop over the same records and
 * against a Spring Kafka listener container with per-record acknowledgement; orderedByKey(16)
 * against serial with a 2 ms handler; and the adapter with 1% of records retried. Every rate is
 * measured from the first to the last record handled (group joins excluded); every run uses a fresh
 * consumer group over the same topic.
 */
public final class KafkaBenchmark {

    private static final int PARTITIONS = 8;
    private static final int KEYS = 1_000;

    private KafkaBenchmark() {}

    /**
     * Counts records handled; knows when the first and the {@code target}-th were, in wall time and
     * in the CPU time of this JVM (the in-process broker included).
     */
    static final class Meter {
        private static final com.sun.management.OperatingSystemMXBean OS = (com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
                .getOperatingSystemMXBean();
        final long target;
        final AtomicLong count = new AtomicLong();
        final CountDownLatch done = new CountDownLatch(1);
        volatile long first;
        volatile long last;
        volatile long firstCpu;
        volatile long lastCpu;

        Meter(long target) {
            this.target = target;
        }

        void hit() {
            long n = count.incrementAndGet();
            if (n == 1) {
                first = System.nanoTime();
                firstCpu = OS.getProcessCpuTime();
            }
            if (n == target) {
                last = System.nanoTime();
                lastCpu = OS.getProcessCpuTime();
                done.countDown();
            }
        }

        double await() throws InterruptedException {
            if (!done.await(10, TimeUnit.MINUTES)) {
                throw new IllegalStateException("only " + count.get() + " of " + target + " records in 10 minutes");
            }
            return (target - 1) / ((last - first) / 1e9);
        }

        /** Records per CPU-second of this JVM between the first and the last record (after {@link #await}). */
        double cpuRate() {
            return (target - 1) / (Math.max(1, lastCpu - firstCpu) / 1e9);
        }
    }

    private static final AtomicInteger groups = new AtomicInteger();

    static String group() {
        return "bench-" + groups.incrementAndGet();
    }

    /** Runs the benchmark and prints markdown tables. */
    public static void main(String[] args) throws Exception {
        BenchReport.standalone(KafkaBenchmark::run);
        System.exit(0); // the in-process broker's threads are not daemons
    }

    /** Runs the benchmark into {@code out}. */
    static void run(BenchReport out) throws Exception {
        int rounds = Integer.getInteger("bench.rounds", 5);
        int events = Integer.getInteger("bench.events", 1_000_000);
        KafkaBroker broker = KafkaBroker.get();
        String servers = broker.bootstrapServers();
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, servers))) {
            // The adapter checks its dead-letter topics (default <topic>.DLT) at start.
            admin.createTopics(List.of(new NewTopic("bench", PARTITIONS, (short) 1),
                    new NewTopic("bench-slow", PARTITIONS, (short) 1), new NewTopic("bench.DLT", 1, (short) 1),
                    new NewTopic("bench-slow.DLT", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        long produceStart = System.nanoTime();
        produce(servers, "bench", events);
        double produceSeconds = (System.nanoTime() - produceStart) / 1e9;
        produce(servers, "bench-slow", 40_000);

        Handler noop = m -> AckDecision.ok();
        // Warm-up of every path (JIT), not reported.
        raw(servers, Math.min(events, 200_000));
        adapter(servers, Concurrency.serial(), Math.min(events, 200_000), noop, false);
        springManual(servers, Math.min(events, 200_000));

        List<Double> raw = new ArrayList<>();
        List<Double> serial = new ArrayList<>();
        List<Double> keyed = new ArrayList<>();
        List<Double> manual = new ArrayList<>();
        for (int r = 0; r < rounds; r++) {
            // The four variants in a rotating order: none always runs first (on a quiet broker) or
            // last (on the previous one's garbage).
            for (int v = 0; v < 4; v++) {
                switch ((r + v) % 4) {
                    case 0 -> raw.add(raw(servers, events));
                    case 1 -> serial.add(adapter(servers, Concurrency.serial(), events, noop, false));
                    case 2 -> keyed.add(adapter(servers, Concurrency.orderedByKey(16), events, noop, false));
                    default -> manual.add(springManual(servers, events));
                }
            }
        }
        int recordAckSample = Math.min(events, 20_000);
        double springRecord = springRecord(servers, recordAckSample);
        double retries = adapter(servers, Concurrency.serial(), events, noop, true);

        out.setup("kafka benchmark: %d cores, in-process KRaft broker (one node), %d partitions, %,d records"
                + " of 100 bytes, %,d keys (produced in %.1f s)", Runtime.getRuntime().availableProcessors(),
                PARTITIONS, events, KEYS, produceSeconds);
        double base = Throughput.median(raw);
        out.printf("| no-op handler, %,d records | msg/s (median of %d) | ratio to raw |%n", events, rounds);
        out.println("|---|---:|---:|");
        out.printf("| raw KafkaConsumer poll loop (commitAsync per poll) | %,.0f | 1.00 |%n", base);
        out.printf("| KafkaSource, serial | %,.0f | %.2f |%n", Throughput.median(serial),
                Throughput.pairedRatio(serial, raw));
        out.printf("| KafkaSource, orderedByKey(16) | %,.0f | %.2f |%n", Throughput.median(keyed),
                Throughput.pairedRatio(keyed, raw));
        out.printf("| Spring Kafka container, MANUAL ack per record | %,.0f | %.2f |%n", Throughput.median(manual),
                Throughput.pairedRatio(manual, raw));
        out.printf("| Spring Kafka container, AckMode.RECORD (first %,d records) | %,.0f | %.2f |%n",
                recordAckSample, springRecord, springRecord / base);
        out.printf("| KafkaSource, serial, 1%% of records retried once | %,.0f | %.2f |%n%n", retries,
                retries / base);
        out.printf("rounds (msg/s): raw %s; serial %s; orderedByKey %s; spring manual %s%n", Throughput.format(raw),
                Throughput.format(serial), Throughput.format(keyed), Throughput.format(manual));
        out.printf("Ratios of the medians: serial / raw %.2f, serial / Spring MANUAL %.2f.%n%n",
                Throughput.median(serial) / base, Throughput.median(serial) / Throughput.median(manual));
        out.target("8", "KafkaSource serial / raw KafkaConsumer poll loop, no-op handler",
                Throughput.pairedRatio(serial, raw), BenchResult.Comparison.AT_LEAST, 0.8, "", "");
        out.target("8", "KafkaSource serial / Spring Kafka container, MANUAL ack per record",
                Throughput.pairedRatio(serial, manual), BenchResult.Comparison.AT_LEAST, 1.0, "×", "");

        Handler twoMs = m -> {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
            return AckDecision.ok();
        };
        double slowSerial = adapter(servers, "bench-slow", Concurrency.serial(), 1_500, twoMs, false);
        double slowKeyed = adapter(servers, "bench-slow", Concurrency.orderedByKey(16), 16_000, twoMs, false);
        out.printf("| 2 ms handler, %,d keys | msg/s | ratio |%n", KEYS);
        out.println("|---|---:|---:|");
        out.printf("| KafkaSource, serial (1,500 records) | %,.0f | 1.00 |%n", slowSerial);
        out.printf("| KafkaSource, orderedByKey(16) (16,000 records) | %,.0f | %.2f |%n", slowKeyed,
                slowKeyed / slowSerial);
        out.target("8", "orderedByKey(16) / serial, 2 ms handler", slowKeyed / slowSerial,
                BenchResult.Comparison.AT_LEAST, 8, "×", "");

        KafkaRetryBenchmark.run(out, servers, "bench", Math.min(events, KafkaRetryBenchmark.events()));
    }

    static void produce(String servers, String topic, int count) throws Exception {
        byte[] value = new byte[100];
        try (var producer = new KafkaProducer<>(Map.<String, Object>of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, servers,
                ProducerConfig.LINGER_MS_CONFIG, "20", ProducerConfig.BATCH_SIZE_CONFIG, "262144",
                ProducerConfig.ACKS_CONFIG, "1"), new ByteArraySerializer(), new ByteArraySerializer())) {
            for (int i = 0; i < count; i++) {
                producer.send(new ProducerRecord<>(topic, ("k" + (i % KEYS)).getBytes(), value));
            }
            producer.flush();
        }
    }

    static Map<String, Object> consumerProps(String servers, String group) {
        return Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, servers, ConsumerConfig.GROUP_ID_CONFIG, group,
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest", ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false",
                ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "500");
    }

    private static double raw(String servers, int count) throws Exception {
        Meter meter = new Meter(count);
        try (var consumer = new KafkaConsumer<>(consumerProps(servers, group()), new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            consumer.subscribe(List.of("bench"));
            while (meter.count.get() < count) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                    if (r.value() != null) { // the no-op handler
                        meter.hit();
                    }
                }
                consumer.commitAsync();
            }
            consumer.commitSync();
        }
        return meter.await();
    }

    private static double adapter(String servers, Concurrency concurrency, int count, Handler handler, boolean retry)
            throws Exception {
        return adapter(servers, "bench", concurrency, count, handler, retry);
    }

    private static double adapter(String servers, String topic, Concurrency concurrency, int count, Handler handler,
            boolean retry) throws Exception {
        Meter meter = new Meter(count);
        KafkaSourceConfigBuilder config = KafkaSourceConfig.builder(servers, group()).topics(topic);
        Integer buffer = Integer.getInteger("bench.kafka.buffer");
        if (buffer != null) {
            config.bufferSize(buffer);
        }
        KafkaSource source = KafkaSource.of(config.build());
        ProcessingApp app = ProcessingApp.builder().inboxSize(1_000).processor("bench", source, concurrency, m -> {
            if (retry && m.envelope().attempt() == 0 && Math.floorMod(m.id().hashCode(), 100) == 0) {
                return AckDecision.retry(Duration.ZERO);
            }
            AckDecision d = handler.handle(m);
            meter.hit();
            return d;
        }).build().start();
        try {
            return meter.await();
        } finally {
            app.stop();
            source.close();
        }
    }

    private static double springManual(String servers, int count) throws Exception {
        Meter meter = new Meter(count);
        ContainerProperties props = new ContainerProperties("bench");
        props.setAckMode(ContainerProperties.AckMode.MANUAL);
        props.setMessageListener((AcknowledgingMessageListener<byte[], byte[]>) (record, ack) -> {
            meter.hit();
            ack.acknowledge();
        });
        return runSpring(servers, props, meter);
    }

    private static double springRecord(String servers, int count) throws Exception {
        Meter meter = new Meter(count);
        ContainerProperties props = new ContainerProperties("bench");
        props.setAckMode(ContainerProperties.AckMode.RECORD);
        props.setMessageListener((MessageListener<byte[], byte[]>) record -> meter.hit());
        return runSpring(servers, props, meter);
    }

    private static double runSpring(String servers, ContainerProperties props, Meter meter) throws Exception {
        var factory = new DefaultKafkaConsumerFactory<>(consumerProps(servers, group()), new ByteArrayDeserializer(),
                new ByteArrayDeserializer());
        var container = new KafkaMessageListenerContainer<>(factory, props);
        container.start();
        try {
            return meter.await();
        } finally {
            container.stop();
        }
    }
}
