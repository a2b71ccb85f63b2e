package dev.waymark.messaging;

/** What a processor failure does to the other processors of an app. */
public enum FailureStrategy {
    /**
     * The failed processor stays failed and its source is shut down at once (a Kafka consumer leaves
     * its group, so the other members take its partitions over); the others go on.
     */
    ISOLATE,
    /** The first failure stops every processor (gracefully) and is reported once by {@link ProcessingApp#awaitTermination}. */
    STOP_ALL
}
