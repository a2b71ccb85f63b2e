package dev.waymark.store.plumbing;

import java.time.Clock;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

/** Time-ordered UUIDs (RFC 9562 version 7): 48 bits of Unix milliseconds, then 74 random bits. */
public final class UuidV7 {

    private UuidV7() {}

    /** A new version-7 UUID stamped with {@code clock}'s current millisecond. */
    public static UUID next(Clock clock) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        long millis = clock.millis() & 0xFFFF_FFFF_FFFFL;
        long msb = (millis << 16) | 0x7000L | (random.nextLong() & 0x0FFFL);
        long lsb = (random.nextLong() & 0x3FFF_FFFF_FFFF_FFFFL) | 0x8000_0000_0000_0000L;
        return new UUID(msb, lsb);
    }
}
