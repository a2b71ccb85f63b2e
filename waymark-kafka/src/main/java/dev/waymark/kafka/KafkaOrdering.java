package dev.waymark.kafka;

/**
 * What the adapter puts in {@link dev.waymark.messaging.Envelope#orderingKey()}, which
 * {@link dev.waymark.messaging.Concurrency#orderedByKey(int)} keeps in order. Commits are gap-free
 * per partition under every choice; this only decides which records may be handled in parallel.
 */
public enum KafkaOrdering {
    /**
     * The record key, compared by its bytes (keys that are not UTF-8 too): one key in order, keys in
     * parallel; records without a key (null) are unconstrained, an empty key is one key.
     */
    KEY,
    /** The partition ({@code topic-partition}): one partition in order, partitions in parallel. */
    PARTITION
}
