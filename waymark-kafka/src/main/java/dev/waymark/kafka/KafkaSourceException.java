package dev.waymark.kafka;

import dev.waymark.messaging.MessagingException;
import java.io.Serial;

/**
 * A Kafka operation the source needs failed for good: a fatal client error (authentication,
 * authorization, no offset and no reset policy, a fenced static member, a corrupt record) or a
 * retriable one that outlived the bounded retry budget. It ends the source: {@code poll} throws it,
 * so the processor fails instead of completing normally. It carries the topic, partition and offset
 * it concerns when there is one. A failure about a dead-letter topic is a
 * {@link DeadLetterTopicException}.
 */
public sealed class KafkaSourceException extends MessagingException permits DeadLetterTopicException {
    @Serial
    private static final long serialVersionUID = 1L;

    private final String topic;
    private final int partition;
    private final long offset;

    /**
     * A failure on a record or partition.
     *
     * @param message what failed, with the state that explains it
     * @param topic the topic, or null when the failure concerns no partition
     * @param partition the partition, or -1
     * @param offset the offset, or -1
     * @param cause the client's exception
     */
    public KafkaSourceException(String message, String topic, int partition, long offset, Throwable cause) {
        super(message + (topic == null
                ? ""
                : " (topic " + topic + (partition < 0
                        ? ""
                        : ", partition " + partition
                                + (offset < 0 ? "" : ", offset " + offset))
                        + ")"),
                cause);
        this.topic = topic;
        this.partition = partition;
        this.offset = offset;
    }

    /** The topic concerned, or null. */
    public String topic() {
        return topic;
    }

    /** The partition concerned, or -1. */
    public int partition() {
        return partition;
    }

    /** The offset concerned, or -1. */
    public long offset() {
        return offset;
    }
}
