package dev.waymark.store;

import java.time.Instant;
import java.util.Optional;

/**
 * The state of a stream.
 *
 * @param name the stream name
 * @param category the category (the part of the name before the first {@code '-'})
 * @param version the stream's version: the number of events appended to it
 * @param createdAt when the stream was created (database clock)
 * @param deletedAt when it was soft-deleted, or empty while it is live
 */
public record StreamInfo(String name, String category, long version, Instant createdAt, Optional<Instant> deletedAt) {

    /** Whether the stream is soft-deleted. */
    public boolean isDeleted() {
        return deletedAt.isPresent();
    }
}
