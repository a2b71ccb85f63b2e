package dev.waymark.store;

/**
 * One member's share of a consumer group: the streams whose {@link StreamNames#member(String, int)}
 * equals {@code member}. Every stream belongs to exactly one member, so the members' reads are
 * disjoint and together equal the unpartitioned read.
 *
 * @param member this member, in {@code [0, size)}
 * @param size the number of members, {@code >= 1}
 */
public record Partition(int member, int size) {

    /** The whole: one member of a group of one. */
    public static final Partition WHOLE = new Partition(0, 1);

    /** Validates the member and size. */
    public Partition {
        if (size < 1) {
            throw new InvalidInputException("consumer group size must be >= 1, got " + size);
        }
        if (member < 0 || member >= size) {
            throw new InvalidInputException("consumer group member must be in [0, " + size + "), got " + member);
        }
    }

    /** Member {@code member} of a group of {@code size}. */
    public static Partition of(int member, int size) {
        return new Partition(member, size);
    }

    /** Whether this partition owns the stream. */
    public boolean owns(String streamName) {
        return size == 1 || StreamNames.member(streamName, size) == member;
    }

    /** Whether this is the whole (size 1). */
    public boolean isWhole() {
        return size == 1;
    }

    @Override
    public String toString() {
        return member + "/" + size;
    }
}
