package dev.waymark.kafka;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerInterceptor;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * A producer interceptor (set with {@code interceptor.classes}) whose {@code close()}, called while
 * the producer closes, holds the close until the test releases it. Gates are keyed by the
 * producer's {@code client.id}; a producer without a registered gate closes freely.
 */
public final class CloseGateInterceptor implements ProducerInterceptor<byte[], byte[]> {

    /** Opened when the producer starts closing; the close goes on once {@code release} is counted down. */
    static final class Gate {
        final CountDownLatch closing = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
    }

    private static final Map<String, Gate> GATES = new ConcurrentHashMap<>();

    private Gate gate;

    /** Registers the gate of the producer with this client id. */
    static Gate register(String clientId) {
        Gate gate = new Gate();
        GATES.put(clientId, gate);
        return gate;
    }

    @Override
    public void configure(Map<String, ?> configs) {
        gate = GATES.get(String.valueOf(configs.get(ProducerConfig.CLIENT_ID_CONFIG)));
    }

    @Override
    public ProducerRecord<byte[], byte[]> onSend(ProducerRecord<byte[], byte[]> record) {
        return record;
    }

    @Override
    public void onAcknowledgement(RecordMetadata metadata, Exception exception) {}

    @Override
    public void close() {
        if (gate == null) {
            return;
        }
        gate.closing.countDown();
        try {
            gate.release.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
