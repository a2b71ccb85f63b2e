package dev.waymark.subscription;

import dev.waymark.core.DeadLetterReason;
import dev.waymark.store.GlobalPosition;
import java.time.Instant;
import java.util.Optional;
import java.util.UUID;

/**
 * A recorded dead letter.
 *
 * @param id the dead letter's id
 * @param subscription the subscription
 * @param member the consumer-group member (0 without a group)
 * @param eventId the event
 * @param streamName the event's stream
 * @param streamVersion the event's version in its stream
 * @param position the event's global position
 * @param eventType the event's type
 * @param reasonKind {@link DeadLetterReason#kind()}
 * @param reasonSummary {@link DeadLetterReason#summary()}
 * @param reasonJson the reason as a JSON object: {@code kind}, {@code summary} and the details (an
 *     {@link DeadLetterReason.Other}'s details under {@code detail}, as JSON, or as text when they are
 *     not JSON)
 * @param attempts how many deliveries were made
 * @param createdAt when it was recorded (database clock)
 * @param replayedAt when it was last replayed
 * @param replayOutcome what the last replay's handler answered
 * @param error the handler's exception that led to the dead letter: its last one when the retries
 *     ran out ({@link DeadLetterReason.MaxAttempts}), or the cause given with
 *     {@link Ack#deadLetter(DeadLetterReason, Throwable)}; empty when there was none
 */
public record DeadLetter(
        long id,
        String subscription,
        int member,
        UUID eventId,
        String streamName,
        long streamVersion,
        GlobalPosition position,
        String eventType,
        String reasonKind,
        String reasonSummary,
        String reasonJson,
        int attempts,
        Instant createdAt,
        Optional<Instant> replayedAt,
        Optional<String> replayOutcome,
        Optional<HandlerError> error) {

    /** The longest stored exception class name, in chars. */
    public static final int MAX_ERROR_TYPE_LENGTH = 500;
    /** The longest stored exception message, in chars. */
    public static final int MAX_ERROR_MESSAGE_LENGTH = 2000;

    /**
     * A handler's exception as stored with its dead letter: bounded, and storable by PostgreSQL.
     * A longer class name or message keeps its first {@code max - 1} chars and ends with
     * {@code '…'}, never cut between the two halves of a surrogate pair; a NUL or a lone surrogate
     * becomes U+FFFD.
     *
     * @param type the exception's class name ({@link Class#getName()}), at most
     *     {@value #MAX_ERROR_TYPE_LENGTH} chars
     * @param message its message, at most {@value #MAX_ERROR_MESSAGE_LENGTH} chars, if it had one
     */
    public record HandlerError(String type, Optional<String> message) {

        /** Validates the components. */
        public HandlerError {
            if (type == null || message == null) {
                throw new SubscriptionConfigException("a handler error needs a type and an optional message, got type="
                        + type + ", message=" + message);
            }
        }

        /** The stored form of {@code error}. */
        public static HandlerError of(Throwable error) {
            return new HandlerError(dev.waymark.subscription.internal.Bounded.text(error.getClass().getName(),
                    MAX_ERROR_TYPE_LENGTH),
                    Optional.ofNullable(error.getMessage())
                            .map(m -> dev.waymark.subscription.internal.Bounded.text(m, MAX_ERROR_MESSAGE_LENGTH)));
        }
    }
}
