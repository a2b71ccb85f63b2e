package dev.waymark.store;

import java.io.Serial;

/** An append that needs a live stream found it missing or soft-deleted. */
public final class StreamNotFoundException extends AppendConflictException {
    @Serial
    private static final long serialVersionUID = 1L;

    private final boolean deleted;

    /** The stream is missing, or soft-deleted when {@code deleted}. */
    public StreamNotFoundException(String streamName, boolean deleted, String sqlState, Throwable cause) {
        super("stream '" + streamName + "' " + (deleted ? "is soft-deleted" : "does not exist"), streamName, sqlState,
                cause);
        this.deleted = deleted;
    }

    /** Whether the stream exists but is soft-deleted. */
    public boolean isDeleted() {
        return deleted;
    }
}
