package dev.waymark.store;

/**
 * A position in the store's global order. Positions are totally ordered and a reader that has
 * seen position {@code p} never later receives an event at a position {@code <= p}. Treat them as
 * opaque: compare them, persist them ({@link #toString()} / {@link #parse(String)}), never do
 * arithmetic on them; they are not dense.
 *
 * <p>The order is that of the appending transaction's id, then of the event's sequence number
 * within the store, which is why no reader ever skips an event whose transaction commits late.
 *
 * @param transaction the appending transaction's id ({@code xid8}); {@code 0} only for {@link #START}
 * @param sequence the event's sequence number
 */
public record GlobalPosition(long transaction, long sequence) implements Comparable<GlobalPosition> {

    /** Before every event: reading forward from here starts at the first event. */
    public static final GlobalPosition START = new GlobalPosition(0, 0);

    /** After every event: reading backward from here starts at the last visible event. */
    public static final GlobalPosition END = new GlobalPosition(Long.MAX_VALUE, Long.MAX_VALUE);

    /** Validates the components. */
    public GlobalPosition {
        if (transaction < 0 || sequence < 0) {
            throw new IllegalArgumentException(
                    "global position components must be >= 0, got " + transaction + "/" + sequence);
        }
    }

    /**
     * Parses the form produced by {@link #toString()}.
     *
     * @throws IllegalArgumentException if {@code text} is not a position
     */
    public static GlobalPosition parse(String text) {
        if (text == null) {
            throw new IllegalArgumentException("global position text must not be null");
        }
        int slash = text.indexOf('/');
        if (slash <= 0 || slash == text.length() - 1) {
            throw new IllegalArgumentException("not a global position (expected 'tx/seq'): '" + text + "'");
        }
        try {
            return new GlobalPosition(
                    Long.parseLong(text.substring(0, slash)), Long.parseLong(text.substring(slash + 1)));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a global position (expected 'tx/seq'): '" + text + "'", e);
        }
    }

    @Override
    public int compareTo(GlobalPosition other) {
        int byTransaction = Long.compare(transaction, other.transaction);
        return byTransaction != 0 ? byTransaction : Long.compare(sequence, other.sequence);
    }

    /** Whether this position comes strictly after {@code other}. */
    public boolean isAfter(GlobalPosition other) {
        return compareTo(other) > 0;
    }

    /** The persistent form, {@code "tx/seq"}. */
    @Override
    public String toString() {
        return transaction + "/" + sequence;
    }
}
