package dev.waymark.chaos;

import dev.waymark.store.EventData;
import dev.waymark.store.EventStore;
import dev.waymark.store.ExpectedVersion;
import dev.waymark.workflow.WorkflowClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The load of a chaos run, from the test JVM at a modest, fixed rate: an event appended to one of
 * 200 {@code chaos-<n>} streams every {@link #EVENT_EVERY}, a {@code chaos_flow} workflow started
 * every {@link #WORKFLOW_EVERY}, a Kafka record every {@link #RECORD_EVERY} (every 20th marked poison).
 * Failures (the database or the broker being away) are counted, not fatal: the auditor judges what
 * committed, not what the driver believes it sent.
 */
final class LoadDriver implements AutoCloseable {

    static final Duration EVENT_EVERY = Duration.ofMillis(100);
    static final Duration WORKFLOW_EVERY = Duration.ofMillis(1000);
    static final Duration RECORD_EVERY = Duration.ofMillis(150);

    final AtomicLong appended = new AtomicLong();
    final AtomicLong appendFailures = new AtomicLong();
    final AtomicLong workflowsStarted = new AtomicLong();
    final AtomicLong workflowStartFailures = new AtomicLong();
    final AtomicLong recordsAcked = new AtomicLong();
    final AtomicLong poisonAcked = new AtomicLong();
    final AtomicLong recordFailures = new AtomicLong();

    private final EventStore store;
    private final WorkflowClient client;
    private final KafkaProducer<String, String> producer;
    private final String topic;
    private final Random random;
    private final ChaosLog log;
    private volatile boolean running = true;
    private final Thread events;
    private final Thread workflows;
    private final Thread records;

    LoadDriver(EventStore store, String bootstrap, String topic, long seed, ChaosLog log) {
        this.store = store;
        this.client = WorkflowClient.create(store);
        this.topic = topic;
        this.random = new Random(seed ^ 0x5DEECE66DL);
        this.log = log;
        this.producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true",
                ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "120000",
                ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000",
                ProducerConfig.MAX_BLOCK_MS_CONFIG, "10000",
                ProducerConfig.LINGER_MS_CONFIG, "5"),
                new StringSerializer(), new StringSerializer());
        this.events = Thread.ofPlatform().name("chaos-load-events").start(this::appendEvents);
        this.workflows = Thread.ofPlatform().name("chaos-load-workflows").start(this::startWorkflows);
        this.records = Thread.ofPlatform().name("chaos-load-records").start(this::produceRecords);
    }

    private void appendEvents() {
        long n = 0;
        while (running) {
            int stream;
            synchronized (random) {
                stream = random.nextInt(200);
            }
            try {
                store.append(ChaosWorker.CATEGORY + "-" + stream, ExpectedVersion.any(),
                        List.of(EventData.json("Tick", "{\"n\":" + n + "}")));
                appended.incrementAndGet();
            } catch (RuntimeException e) {
                appendFailures.incrementAndGet();
            }
            n++;
            pause(EVENT_EVERY);
        }
    }

    private void startWorkflows() {
        int n = 0;
        while (running) {
            try {
                client.start(ChaosWorker.FLOW, "f-" + n, n, String.class);
                workflowsStarted.incrementAndGet();
                n++;
            } catch (RuntimeException e) {
                workflowStartFailures.incrementAndGet(); // the same id is started again next time (idempotent)
            }
            pause(WORKFLOW_EVERY);
        }
    }

    private void produceRecords() {
        long n = 0;
        while (running) {
            boolean poison = n % 20 == 7;
            int key;
            synchronized (random) {
                key = random.nextInt(30);
            }
            String value = "{\"seq\":" + n + ",\"poison\":" + poison + "}";
            try {
                producer.send(new ProducerRecord<>(topic, "k-" + key, value), (metadata, error) -> {
                    if (error == null) {
                        recordsAcked.incrementAndGet();
                        if (poison) {
                            poisonAcked.incrementAndGet();
                        }
                    } else {
                        recordFailures.incrementAndGet();
                    }
                });
            } catch (RuntimeException e) {
                recordFailures.incrementAndGet();
            }
            n++;
            pause(RECORD_EVERY);
        }
    }

    private static void pause(Duration d) {
        try {
            TimeUnit.NANOSECONDS.sleep(d.toNanos()); // pacing of the load, not a wait for a condition
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Stops the load and flushes the producer (records still buffered are delivered or fail). */
    @Override
    public void close() {
        running = false;
        try {
            events.join(30_000);
            workflows.join(30_000);
            records.join(30_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        producer.flush();
        producer.close(Duration.ofSeconds(30));
        log.note("load stopped: " + summary());
    }

    String summary() {
        return appended.get() + " events appended (" + appendFailures.get() + " append calls failed), "
                + workflowsStarted.get() + " workflows started (" + workflowStartFailures.get()
                + " start calls failed), "
                + recordsAcked.get() + " Kafka records acknowledged (" + poisonAcked.get() + " poison; "
                + recordFailures.get() + " sends failed)";
    }
}
