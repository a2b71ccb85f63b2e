package dev.waymark.store;

import java.io.Serial;

/**
 * An append's expected version did not hold. Nothing of the append (of any stream, for a
 * multi-stream append) was written.
 */
public abstract sealed class AppendConflictException extends StoreException
        permits WrongExpectedVersionException, StreamAlreadyExistsException, StreamNotFoundException {
    @Serial
    private static final long serialVersionUID = 1L;

    private final String streamName;

    AppendConflictException(String message, String streamName, String sqlState, Throwable cause) {
        super(message, sqlState, cause);
        this.streamName = streamName;
    }

    /** The stream whose condition failed. */
    public String streamName() {
        return streamName;
    }
}
