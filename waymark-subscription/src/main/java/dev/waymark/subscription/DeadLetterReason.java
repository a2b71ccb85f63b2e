package dev.waymark.subscription;

import dev.waymark.subscription.internal.ReasonJson;

/** Why an event was dead-lettered; stored as a kind, a one-line summary and a JSON document. */
public sealed interface DeadLetterReason {

    /** The event can never be handled (for example it crashes the handler). */
    static DeadLetterReason poison(String detail) {
        return new Poison(detail);
    }

    /** The event's payload is invalid. */
    static DeadLetterReason invalid(String detail) {
        return new Invalid(detail);
    }

    /** The retry budget was spent after {@code attempts} deliveries. */
    static DeadLetterReason maxAttempts(int attempts) {
        return new MaxAttempts(attempts);
    }

    /**
     * Anything else, with a summary and a JSON document of details (or null).
     *
     * @throws IllegalArgumentException if the summary is null or blank
     */
    static DeadLetterReason other(String summary, String json) {
        return new Other(summary, json);
    }

    /** The stored kind: {@code poison}, {@code invalid}, {@code max_attempts} or {@code other}. */
    String kind();

    /** A one-line summary. */
    String summary();

    /**
     * The reason as a JSON object: {@code kind}, {@code summary} and the details. {@link Other}
     * answers with its record component instead: the details as given, or null.
     */
    default String json() {
        return ReasonJson.of(this);
    }

    /** @param detail what is wrong */
    record Poison(String detail) implements DeadLetterReason {
        @Override
        public String kind() {
            return "poison";
        }

        @Override
        public String summary() {
            return "poison: " + detail;
        }
    }

    /** @param detail what is invalid */
    record Invalid(String detail) implements DeadLetterReason {
        @Override
        public String kind() {
            return "invalid";
        }

        @Override
        public String summary() {
            return "invalid payload: " + detail;
        }
    }

    /** @param attempts how many deliveries were made */
    record MaxAttempts(int attempts) implements DeadLetterReason {
        @Override
        public String kind() {
            return "max_attempts";
        }

        @Override
        public String summary() {
            return "max retry attempts exceeded (" + attempts + ")";
        }
    }

    /**
     * @param summary a one-line summary
     * @param json details as a JSON document, or null
     */
    record Other(String summary, String json) implements DeadLetterReason {
        /**
         * Validates the summary (stored in a column that requires one).
         *
         * @throws IllegalArgumentException if the summary is null or blank
         */
        public Other {
            if (summary == null || summary.isBlank()) {
                throw new IllegalArgumentException("a dead letter's summary must not be null or blank");
            }
        }

        @Override
        public String kind() {
            return "other";
        }
    }
}
