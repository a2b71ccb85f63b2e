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
        return of(envelope.messageId());
    }

    /**
     * The coordinates in a message id the adapter gave ({@code Message.id()}): {@code topic-partition-offset},
     * split at the last two dashes, partition and offset in decimal digits. The form is all it checks,
     * not where the id came from: an id of another source that happens to end in two groups of digits
     * (an event-store UUID like {@code ...-8943-916803123456}, rarely) parses too, so call it only
     * for messages of a Kafka source.
     *
     * @throws IllegalArgumentException if {@code messageId} is null or not {@code topic-partition-offset}
     */
    public static KafkaCoordinates of(String messageId) {
        if (messageId == null) {
            throw new IllegalArgumentException("not a Kafka message id (topic-partition-offset): null");
        }
        int last = messageId.lastIndexOf('-');
        int middle = last > 0 ? messageId.lastIndexOf('-', last - 1) : -1;
        if (middle <= 0 || !digits(messageId, middle + 1, last) || !digits(messageId, last + 1, messageId.length())) {
            throw new IllegalArgumentException("not a Kafka message id (topic-partition-offset): " + messageId);
        }
        try {
            return new KafkaCoordinates(messageId.substring(0, middle),
                    Integer.parseInt(messageId.substring(middle + 1, last)),
                    Long.parseLong(messageId.substring(last + 1)));
        } catch (NumberFormatException e) { // digits only, so too large
            throw new IllegalArgumentException("not a Kafka message id (topic-partition-offset): " + messageId, e);
        }
    }

    /** Whether {@code s[from, to)} is one or more ASCII digits (no sign). */
    private static boolean digits(String s, int from, int to) {
        if (from >= to) {
            return false;
        }
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') {
                return false;
            }
        }
        return true;
    }
}
