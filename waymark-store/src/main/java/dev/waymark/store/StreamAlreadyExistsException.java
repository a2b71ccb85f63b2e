package dev.waymark.store;

import java.io.Serial;

/** A {@link ExpectedVersion#noStream()} append found the stream existing (live or soft-deleted). */
public final class StreamAlreadyExistsException extends AppendConflictException {
    @Serial
    private static final long serialVersionUID = 1L;

    private final long actualVersion;

    /** The stream exists at {@code actualVersion}. */
    public StreamAlreadyExistsException(
            String streamName, long actualVersion, boolean deleted, String sqlState, Throwable cause) {
        super("append to stream '" + streamName + "' expected no stream, but it exists at version " + actualVersion
                + (deleted ? " (soft-deleted; the name stays reserved)" : ""),
                streamName, sqlState, cause);
        this.actualVersion = actualVersion;
    }

    /** The version of the existing stream. */
    public long actualVersion() {
        return actualVersion;
    }
}
