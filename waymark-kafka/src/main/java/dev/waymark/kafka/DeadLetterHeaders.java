package dev.waymark.kafka;

/**
 * Headers the adapter adds to a record it publishes to a dead-letter topic, after the original
 * record's headers (which it keeps verbatim, including {@code traceparent} and {@code tracestate}).
 * Values are UTF-8 text. Their size is bounded (the reason summary is cut at
 * {@link #MAX_REASON_BYTES}), so the adapter knows how much a dead letter can outgrow its record and
 * sizes its producer and the dead-letter topics it creates for that.
 */
public final class DeadLetterHeaders {

    /** The reason's code: {@code poison}, {@code invalid}, {@code max_attempts}, {@code other}. */
    public static final String REASON_CODE = "waymark.dlt.reason.code";
    /**
     * The reason's one-line summary, at most {@link #MAX_REASON_BYTES} bytes of UTF-8 (a longer one is
     * cut at a character boundary and ends with {@code …}).
     */
    public static final String REASON = "waymark.dlt.reason";
    /** The most bytes of the {@link #REASON} header's value. */
    public static final int MAX_REASON_BYTES = 1024;
    /** The delivery attempt that dead-lettered it (0 for the first delivery). */
    public static final String ATTEMPT = "waymark.dlt.attempt";
    /** The original topic. */
    public static final String ORIGINAL_TOPIC = "waymark.dlt.original.topic";
    /** The original partition. */
    public static final String ORIGINAL_PARTITION = "waymark.dlt.original.partition";
    /** The original offset. */
    public static final String ORIGINAL_OFFSET = "waymark.dlt.original.offset";
    /** The original record's timestamp in epoch milliseconds, when it had one. */
    public static final String ORIGINAL_TIMESTAMP = "waymark.dlt.original.timestamp";
    /** The consumer group that dead-lettered it. */
    public static final String GROUP = "waymark.dlt.group";

    private DeadLetterHeaders() {}
}
