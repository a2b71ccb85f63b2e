package dev.waymark.testkit;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;
import org.apache.kafka.common.utils.Exit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The JVM's in-process Kafka broker for tests: one combined KRaft node (broker and controller),
 * started on first use and stopped when the JVM exits. Internal topics use replication factor 1
 * (consumer groups hang otherwise on a single node), the initial rebalance delay is 0, and topics
 * are never created on first use ({@code auto.create.topics.enable=false}): a missing topic stays
 * missing, as on a cluster that forbids automatic creation.
 * Needs {@code org.apache.kafka:kafka-test-common-runtime}, {@code kafka_2.13}, {@code kafka-server}
 * and {@code kafka-clients} (also its {@code test} classifier) on the test classpath.
 *
 * <p>At JVM exit the node stops before its data directories are deleted: Kafka's test utilities
 * would delete them from a shutdown hook of their own, concurrently with the node's shutdown, and a
 * node that finds its metadata directory gone halts the JVM with status 1 (a test run that passed
 * would then fail). Kafka's halt requests are logged and ignored in a JVM that uses this broker.
 */
public final class KafkaBroker {

    /** Broker settings applied to the in-process node. */
    public static final Map<String, String> SETTINGS = Map.of(
            "offsets.topic.replication.factor", "1",
            "offsets.topic.num.partitions", "1",
            "group.initial.rebalance.delay.ms", "0",
            "transaction.state.log.replication.factor", "1",
            "transaction.state.log.min.isr", "1",
            "auto.create.topics.enable", "false");

    private static final Logger log = LoggerFactory.getLogger(KafkaBroker.class);
    private static KafkaBroker instance;
    /** Kafka's delete-on-exit hooks for its temporary directories, run after the node stopped. */
    private static final List<Runnable> AFTER_CLOSE = new CopyOnWriteArrayList<>();

    private final KafkaClusterTestKit cluster;

    private KafkaBroker(KafkaClusterTestKit cluster) {
        this.cluster = cluster;
    }

    private boolean closed;

    /** The JVM's broker, started on first call. */
    public static synchronized KafkaBroker get() {
        if (instance == null) {
            instance = start();
        }
        return instance;
    }

    private static KafkaBroker start() {
        long started = System.nanoTime();
        Exit.setShutdownHookAdder((name, hook) -> AFTER_CLOSE.add(hook));
        Exit.setHaltProcedure((status, message) -> log.error(
                "waymark testkit: in-process Kafka asked to halt the JVM (status {}): {}; ignored", status, message));
        try {
            KafkaClusterTestKit.Builder builder = new KafkaClusterTestKit.Builder(new TestKitNodes.Builder()
                    .setCombined(true).setNumBrokerNodes(1).setNumControllerNodes(1).build());
            SETTINGS.forEach(builder::setConfigProp);
            KafkaClusterTestKit cluster = builder.build();
            cluster.format();
            cluster.startup();
            cluster.waitForReadyBrokers();
            log.info("waymark testkit: in-process Kafka at {} started in {} ms", cluster.bootstrapServers(),
                    (System.nanoTime() - started) / 1_000_000);
            KafkaBroker broker = new KafkaBroker(cluster);
            Runtime.getRuntime().addShutdownHook(Thread.ofPlatform().unstarted(broker::close));
            return broker;
        } catch (Exception e) {
            Exit.resetShutdownHookAdder(); // no node to stop first: its files go at exit as Kafka meant
            AFTER_CLOSE.forEach(hook -> Runtime.getRuntime().addShutdownHook(Thread.ofPlatform().unstarted(hook)));
            AFTER_CLOSE.clear();
            throw new IllegalStateException("could not start the in-process Kafka broker", e);
        }
    }

    /** The bootstrap servers, {@code host:port}. */
    public String bootstrapServers() {
        return cluster.bootstrapServers();
    }

    /**
     * Stops the broker side of the node (the KRaft controller stays up), so clients see the broker
     * unreachable until {@link #startBroker()}. Its port and data are kept. Tests that call it must
     * start it again, even when they fail (in a {@code finally}).
     */
    public synchronized void stopBroker() {
        cluster.brokers().values().forEach(broker -> {
            broker.shutdown();
            broker.awaitShutdown();
        });
        log.info("waymark testkit: in-process Kafka broker stopped");
    }

    /** Starts the broker stopped by {@link #stopBroker()} on the same port and waits until it is ready. */
    public synchronized void startBroker() {
        try {
            cluster.brokers().values().forEach(broker -> broker.startup());
            cluster.waitForReadyBrokers();
            log.info("waymark testkit: in-process Kafka broker restarted at {}", cluster.bootstrapServers());
        } catch (Exception e) {
            throw new IllegalStateException("could not restart the in-process Kafka broker", e);
        }
    }

    /**
     * Stops the node and deletes its data, once; later calls do nothing. Runs by itself at JVM exit;
     * a program that exits with {@code System.exit} calls it first so the shutdown is orderly.
     */
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            cluster.close();
        } catch (Exception e) {
            log.warn("waymark testkit: stopping in-process Kafka failed", e);
        }
        for (Runnable hook : AFTER_CLOSE) {
            try {
                hook.run();
            } catch (RuntimeException e) {
                log.warn("waymark testkit: deleting in-process Kafka's files failed", e);
            }
        }
    }

    /** The underlying test cluster (for broker restarts and other faults). */
    public KafkaClusterTestKit cluster() {
        return cluster;
    }
}
