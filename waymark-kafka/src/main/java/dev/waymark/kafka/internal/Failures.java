package dev.waymark.kafka.internal;

import dev.waymark.kafka.KafkaSourceException;
import java.util.Map;
import org.apache.kafka.clients.consumer.InvalidOffsetException;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RecordDeserializationException;
import org.apache.kafka.common.errors.RetriableException;

/** Classifies client failures and turns them into {@link KafkaSourceException}s with coordinates. */
final class Failures {

    private Failures() {}

    /**
     * Whether a failure may clear by itself (a timeout, an unavailable leader or coordinator).
     * Everything else — authentication, authorization, no offset without a reset policy, a fenced
     * static member, unsupported versions, configuration, corrupt records — is fatal.
     */
    static boolean retriable(Throwable e) {
        return e instanceof RetriableException;
    }

    /** A poll failure, with the partition (and offset) it names when it names one. */
    static KafkaSourceException ofPoll(String source, Throwable e) {
        String what = "kafka source '" + source + "': poll failed: " + e;
        return switch (e) {
            case InvalidOffsetException ioe when !ioe.partitions().isEmpty() -> {
                TopicPartition tp = ioe.partitions().iterator().next();
                long offset = ioe instanceof org.apache.kafka.clients.consumer.OffsetOutOfRangeException oor
                        ? oor.offsetOutOfRangePartitions().getOrDefault(tp, -1L)
                        : -1L;
                yield new KafkaSourceException(what, tp.topic(), tp.partition(), offset, e);
            }
            case RecordDeserializationException rde ->
                new KafkaSourceException(what, rde.topicPartition().topic(), rde.topicPartition().partition(),
                        rde.offset(), e);
            default -> new KafkaSourceException(what, null, -1, -1, e);
        };
    }

    /** A commit failure, naming the first partition and the offset it tried to commit. */
    static KafkaSourceException ofCommit(String source, Map<TopicPartition, OffsetAndMetadata> offsets, int attempts,
            Throwable e) {
        String what = "kafka source '" + source + "': committing " + offsets.size() + " partition(s) failed after "
                + attempts + " attempt(s): " + e;
        if (offsets.isEmpty()) {
            return new KafkaSourceException(what, null, -1, -1, e);
        }
        Map.Entry<TopicPartition, OffsetAndMetadata> first = offsets.entrySet().iterator().next();
        return new KafkaSourceException(what, first.getKey().topic(), first.getKey().partition(),
                first.getValue().offset(), e);
    }
}
