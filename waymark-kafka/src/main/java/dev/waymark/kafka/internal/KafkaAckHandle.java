package dev.waymark.kafka.internal;

import dev.waymark.kafka.KafkaSourceEvent.Kind;
import dev.waymark.messaging.AckDecision;
import dev.waymark.messaging.AckHandle;
import dev.waymark.store.DeadLetterReason;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * The acknowledgement of one delivery. Idempotent: once a finalization completed, later calls do
 * nothing (so a delivery cannot resolve its own retry, and a repeated retry holds or seeks once). A call
 * that throws or is interrupted leaves it unfinished, and a later call may complete it. Calls on
 * one handle are serialized.
 */
final class KafkaAckHandle implements AckHandle {

    private final SourceRuntime runtime;
    private final ConsumerRecord<byte[], byte[]> record;
    private final Delivery delivery;
    private final int attempt;
    private boolean completed;

    KafkaAckHandle(SourceRuntime runtime, ConsumerRecord<byte[], byte[]> record, Delivery delivery, int attempt) {
        this.runtime = runtime;
        this.record = record;
        this.delivery = delivery;
        this.attempt = attempt;
    }

    @Override
    public synchronized void finalize(AckDecision decision) throws Exception {
        if (completed) {
            return;
        }
        AckLedger ledger = runtime.ledger();
        switch (decision) {
            case AckDecision.Ok ok -> {
                ledger.ackCompleted(delivery); // the common case: one trip through the ledger's lock
                completed = true;
                return;
            }
            case AckDecision.Retry retry -> {
                if (ledger.retry(delivery, retry.delay())) {
                    runtime.wakeConsumer();
                }
            }
            case AckDecision.DeadLetter dead -> deadLetter(dead.reason());
            case AckDecision.Halt halt -> {
                if (ledger.halt(delivery)) {
                    runtime.wakeConsumer();
                }
            }
        }
        completed = true;
        ledger.completed(delivery);
    }

    @Override
    public boolean isSuperseded() {
        return delivery.isFenced(); // lock-free: checked before every handler call
    }

    private void deadLetter(DeadLetterReason reason) throws InterruptedException {
        AckLedger ledger = runtime.ledger();
        if (!ledger.isCurrent(delivery)) {
            return; // revoked or superseded: the record comes again, to whoever owns it then
        }
        TopicPartition tp = delivery.partition;
        DeadLetterPublisher publisher = runtime.publisher();
        if (publisher == null) {
            SourceRuntime.log.warn("kafka source '{}': dead letter committed WITHOUT a dead-letter topic:"
                    + " topic {} partition {} offset {} reason={}", runtime.name(), tp.topic(), tp.partition(),
                    delivery.offset, reason.summary());
        } else {
            publisher.publish(record, reason, attempt); // throws: nothing is committed past it
        }
        if (ledger.ack(delivery)) {
            runtime.events().emit(Kind.DEAD_LETTERED, tp, delivery.offset, reason.kind());
        }
    }
}
