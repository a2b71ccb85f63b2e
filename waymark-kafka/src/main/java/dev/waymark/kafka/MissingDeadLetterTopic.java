package dev.waymark.kafka;

/**
 * What a source with a publishing {@link DeadLetterPolicy} does when one of its dead-letter topics
 * does not exist. The topics are checked when the source starts (on its first poll, before its
 * consumer joins the group) and, under a {@code topicPattern}, for every topic when it is first
 * assigned; a dead-letter topic the source's pattern matches is refused either way.
 */
public enum MissingDeadLetterTopic {
    /**
     * The default: the source fails at once with a {@link DeadLetterTopicException}
     * ({@link DeadLetterTopicException.Problem#MISSING MISSING}) naming the topic and the remedy,
     * before it hands out any record.
     */
    FAIL,
    /**
     * The source creates it, with the broker's default partition count and replication factor
     * ({@code num.partitions}, {@code default.replication.factor}) and a {@code max.message.bytes}
     * that takes the largest record the source topic accepts plus the headers a dead letter adds.
     * Needs the CREATE permission on the topic; a refused creation fails the source
     * ({@link DeadLetterTopicException.Problem#CHECK_FAILED CHECK_FAILED}). Create the topics
     * yourself to choose partitions, replication or retention.
     */
    CREATE
}
