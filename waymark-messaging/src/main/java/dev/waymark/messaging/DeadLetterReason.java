package dev.waymark.messaging;

/** Why a message was dead-lettered. */
public sealed interface DeadLetterReason {

    /** It can never be handled. */
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
     * Anything else.
     *
     * @throws IllegalArgumentException if the summary is null or blank
     */
    static DeadLetterReason other(String summary, String detail) {
        return new Other(summary, detail);
    }

    /** A short code: poison, invalid, max_attempts, other. */
    String code();

    /** A one-line summary (no payloads or secrets). */
    String summary();

    /** @param detail what is wrong */
    record Poison(String detail) implements DeadLetterReason {
        @Override
        public String code() {
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
        public String code() {
            return "invalid";
        }

        @Override
        public String summary() {
            return "invalid payload: " + detail;
        }
    }

    /** @param attempts deliveries made */
    record MaxAttempts(int attempts) implements DeadLetterReason {
        @Override
        public String code() {
            return "max_attempts";
        }

        @Override
        public String summary() {
            return "max retry attempts exceeded (" + attempts + ")";
        }
    }

    /**
     * @param summary one line
     * @param detail more, or null
     */
    record Other(String summary, String detail) implements DeadLetterReason {
        /**
         * Validates the summary.
         *
         * @throws IllegalArgumentException if the summary is null or blank
         */
        public Other {
            if (summary == null || summary.isBlank()) {
                throw new IllegalArgumentException("a dead letter's summary must not be null or blank");
            }
        }

        @Override
        public String code() {
            return "other";
        }
    }
}
