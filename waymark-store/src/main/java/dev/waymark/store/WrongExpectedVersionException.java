package dev.waymark.store;

import java.io.Serial;

/**
 * An {@link ExpectedVersion#exactly(long)} append found the stream at another version, missing,
 * or soft-deleted. {@link #actualVersion()} reports the real version at the time of the check.
 */
public final class WrongExpectedVersionException extends AppendConflictException {
    @Serial
    private static final long serialVersionUID = 1L;

    private final long expectedVersion;
    private final long actualVersion;
    private final boolean deleted;

    /**
     * @param actualVersion the stream's version, or {@code -1} when the stream does not exist
     */
    public WrongExpectedVersionException(
            String streamName, long expectedVersion, long actualVersion, boolean deleted, String sqlState,
            Throwable cause) {
        super("append to stream '" + streamName + "': expected version " + expectedVersion + " but the stream "
                + (actualVersion < 0 ? "does not exist" : "is at version " + actualVersion)
                + (deleted ? " and is deleted" : ""),
                streamName, sqlState, cause);
        this.expectedVersion = expectedVersion;
        this.actualVersion = actualVersion;
        this.deleted = deleted;
    }

    /** The version the append expected. */
    public long expectedVersion() {
        return expectedVersion;
    }

    /** The stream's actual version, or {@code -1} when the stream does not exist. */
    public long actualVersion() {
        return actualVersion;
    }

    /** Whether the stream is soft-deleted. */
    public boolean isDeleted() {
        return deleted;
    }
}
