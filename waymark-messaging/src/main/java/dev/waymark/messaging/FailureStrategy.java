package dev.waymark.messaging;

/** What a processor failure does to the other processors of an app. */
public enum FailureStrategy {
    /** The failed processor stays failed; the others go on. */
    ISOLATE,
    /** The first failure stops every processor (gracefully) and is reported once by {@link ProcessingApp#awaitTermination}. */
    STOP_ALL
}
