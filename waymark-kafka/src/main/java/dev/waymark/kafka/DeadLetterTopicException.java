package dev.waymark.kafka;

import java.io.Serial;

/**
 * A dead-letter topic kept a record from being dead-lettered, or the source from starting: it is
 * missing, could not be checked or created, is one the source reads itself, or refused a dead
 * letter. It names the dead-letter topic and, when it concerns one record, the record's topic,
 * partition and offset; the message says the remedy. A source that fails with it at start (the
 * topic is checked before the consumer joins its group) has handed out nothing; a refused dead
 * letter commits nothing past its record. Read it from {@code KafkaSource.failure()} or, for a
 * processor, from {@code ProcessingApp.failure(id)} (the cause of the processor's failure).
 */
public final class DeadLetterTopicException extends KafkaSourceException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** What went wrong with the dead-letter topic. */
    public enum Problem {
        /**
         * It does not exist, and the source does not create it
         * ({@link MissingDeadLetterTopic#FAIL}): create it, or configure
         * {@link MissingDeadLetterTopic#CREATE}.
         */
        MISSING,
        /**
         * It could not be checked or created: no permission (DESCRIBE or CREATE on the topic), a
         * topic policy refused it, or the broker did not answer within the broker retry budget.
         */
        CHECK_FAILED,
        /** The source's own topic pattern matches it, so the source would read its dead letters back. */
        READ_BY_SOURCE,
        /** Publishing a dead letter to it failed or timed out (for example a record larger than it accepts). */
        PUBLISH_FAILED
    }

    private final String deadLetterTopic;
    private final Problem problem;

    /**
     * A failure about {@code deadLetterTopic}.
     *
     * @param message what failed, with the state that explains it and the remedy
     * @param problem what went wrong
     * @param deadLetterTopic the dead-letter topic
     * @param topic the original record's topic, or the source topic whose dead-letter topic it is, or null
     * @param partition the original record's partition, or -1
     * @param offset the original record's offset, or -1
     * @param cause the client's exception, or null
     */
    public DeadLetterTopicException(String message, Problem problem, String deadLetterTopic, String topic,
            int partition, long offset, Throwable cause) {
        super(message, topic, partition, offset, cause);
        this.problem = problem;
        this.deadLetterTopic = deadLetterTopic;
    }

    /** The dead-letter topic concerned. */
    public String deadLetterTopic() {
        return deadLetterTopic;
    }

    /** What went wrong. */
    public Problem problem() {
        return problem;
    }
}
