package dev.waymark.kafka;

import dev.waymark.messaging.Envelope;

/**
 * Where a Kafka record lives. The adapter's message id is {@code topic-partition-offset}; this
 * parses it back (topics may themselves contain dashes).
 *
 * @param topic the topic
 * @param partition the partition
 * @param offset the offset
 */
public record KafkaCoordinates(String topic, int partition, long offset) {

    /** The message id the adapter gives this record: {@code topic-partition-offset}. */
    public String messageId() {
        return topic + "-" + partition + "-" + offset;
    }

    /**
     * The coordinates of an envelope produced by {@link KafkaSource}.
     *
     * @throws IllegalArgumentException if the message id is not {@code topic-partition-offset}
     */
    public static KafkaCoordinates of(Envelope envelope) {
        String id = envelope.messageId();
        int last = id.lastIndexOf('-');
        int middle = last > 0 ? id.lastIndexOf('-', last - 1) : -1;
        if (middle <= 0) {
            throw new IllegalArgumentException("not a Kafka message id (topic-partition-offset): " + id);
        }
        try {
            return new KafkaCoordinates(id.substring(0, middle), Integer.parseInt(id.substring(middle + 1, last)),
                    Long.parseLong(id.substring(last + 1)));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a Kafka message id (topic-partition-offset): " + id, e);
        }
    }
}
