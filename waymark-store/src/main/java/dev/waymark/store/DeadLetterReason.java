package dev.waymark.store;

/**
 * Why an event or a message was given up on and dead-lettered: the one reason type of store
 * subscriptions (stored in the dead-letter table as a kind, a one-line summary and a JSON document)
 * and of the messaging runtime (Kafka publishes it as dead-letter topic headers).
 */
public sealed interface DeadLetterReason {

    /** It can never be handled (for example it crashes the handler). */
    static DeadLetterReason poison(String detail) {
        return new Poison(detail);
    }

    /** Its payload is invalid. */
    static DeadLetterReason invalid(String detail) {
        return new Invalid(detail);
    }

    /** The retry budget was spent after {@code attempts} deliveries. */
    static DeadLetterReason maxAttempts(int attempts) {
        return new MaxAttempts(attempts);
    }

    /**
     * Anything else, with a one-line summary and optional details.
     *
     * @param detail a JSON document (stored as JSON) or any other text (stored as a JSON string), or null
     * @throws IllegalArgumentException if the summary is null or blank
     */
    static DeadLetterReason other(String summary, String detail) {
        return new Other(summary, detail);
    }

    /** The stable kind: {@code poison}, {@code invalid}, {@code max_attempts} or {@code other}. */
    String kind();

    /** A one-line summary (no payloads or secrets). */
    String summary();

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
     * @param detail a JSON document or text with more, or null
     */
    record Other(String summary, String detail) implements DeadLetterReason {
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
