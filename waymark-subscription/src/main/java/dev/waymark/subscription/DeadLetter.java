package dev.waymark.subscription;

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
        Optional<String> replayOutcome) {}
