package dev.waymark.store;

/**
 * The optimistic-concurrency condition of an append. Stream versions start at 1: a stream that
 * holds N events is at version N.
 *
 * <table>
 *   <caption>Outcome by stream state</caption>
 *   <tr><th>variant</th><th>missing</th><th>live, matching</th><th>live, other version</th><th>soft-deleted</th></tr>
 *   <tr><td>{@link #any()}</td><td>create</td><td>append</td><td>append</td><td>{@link StreamNotFoundException}</td></tr>
 *   <tr><td>{@link #noStream()}</td><td>create</td><td colspan="2">{@link StreamAlreadyExistsException}</td><td>{@link StreamAlreadyExistsException}</td></tr>
 *   <tr><td>{@link #streamExists()}</td><td>{@link StreamNotFoundException}</td><td>append</td><td>append</td><td>{@link StreamNotFoundException}</td></tr>
 *   <tr><td>{@link #exactly(long) exactly(n)}</td><td>{@link WrongExpectedVersionException}</td><td>append</td><td>{@link WrongExpectedVersionException}</td><td>{@link WrongExpectedVersionException}</td></tr>
 * </table>
 *
 * <p>Concurrent appenders to one stream are serialized, so of two {@code noStream()} or two
 * {@code exactly(n)} appends exactly one succeeds.
 */
public sealed interface ExpectedVersion {

    /** Append whatever the stream's version; create the stream when it does not exist. */
    static ExpectedVersion any() {
        return Any.INSTANCE;
    }

    /** Append only if the stream has never existed (a soft-deleted stream still exists). */
    static ExpectedVersion noStream() {
        return NoStream.INSTANCE;
    }

    /** Append only to a live stream, whatever its version. */
    static ExpectedVersion streamExists() {
        return StreamExists.INSTANCE;
    }

    /**
     * Append only if the live stream is at exactly this version. A live stream holds at least one
     * event, so the version is at least 1; for a stream that must not exist yet use {@link #noStream()}.
     *
     * @throws InvalidInputException if {@code version} is below 1
     */
    static ExpectedVersion exactly(long version) {
        return new Exactly(version);
    }

    /** Any version; creates the stream if missing. */
    enum Any implements ExpectedVersion {
        /** The only instance. */
        INSTANCE;

        @Override
        public String toString() {
            return "any";
        }
    }

    /** The stream must not exist. */
    enum NoStream implements ExpectedVersion {
        /** The only instance. */
        INSTANCE;

        @Override
        public String toString() {
            return "noStream";
        }
    }

    /** The stream must exist and be live. */
    enum StreamExists implements ExpectedVersion {
        /** The only instance. */
        INSTANCE;

        @Override
        public String toString() {
            return "streamExists";
        }
    }

    /**
     * The live stream must be at exactly {@code version}.
     *
     * @param version the expected version, {@code >= 1}
     */
    record Exactly(long version) implements ExpectedVersion {
        /**
         * Validates the version.
         *
         * @throws InvalidInputException if {@code version} is below 1
         */
        public Exactly {
            // 0 could never succeed: a missing stream is no version, a live stream is at 1 or more
            if (version < 1) {
                throw new InvalidInputException("expected version must be >= 1 (stream versions start at 1), got "
                        + version
                        + (version == 0
                                ? "; for a stream that must not exist yet use ExpectedVersion.noStream()"
                                : ""));
            }
        }

        @Override
        public String toString() {
            return "exactly(" + version + ")";
        }
    }
}
