package dev.waymark.subscription;

import dev.waymark.subscription.internal.ResizeProcedure;
import java.io.Serial;
import java.util.List;

/**
 * A consumer-group member was started from its checkpoint, but the subscription's checkpoints were
 * written by a group of another size. Member {@code i} of 2 and member {@code i} of 3 read different
 * streams, so resuming from the old checkpoints would skip events; the member refuses to start and
 * delivers nothing.
 */
public final class ConsumerGroupSizeMismatchException extends SubscriptionException {
    @Serial
    private static final long serialVersionUID = 1L;

    private final String subscription;
    private final int configuredSize;
    private final int[] storedSizes;

    /** {@code subscription} was started with groups of {@code configuredSize} but stores checkpoints of {@code storedSizes}. */
    public ConsumerGroupSizeMismatchException(String subscription, int configuredSize, List<Integer> storedSizes) {
        super("subscription '" + subscription + "' was started as a consumer group of " + configuredSize
                + " but its checkpoints were written by a group of " + sizes(storedSizes) + "; resuming from them"
                + " would skip events, so nothing is delivered. "
                + ResizeProcedure.steps(subscription, configuredSize, false));
        this.subscription = subscription;
        this.configuredSize = configuredSize;
        this.storedSizes = storedSizes.stream().mapToInt(Integer::intValue).toArray();
    }

    private static String sizes(List<Integer> sizes) {
        return sizes.size() == 1 ? sizes.get(0).toString() : "sizes " + sizes;
    }

    /** The subscription. */
    public String subscription() {
        return subscription;
    }

    /** The group size the member was started with ({@code 1} without a group). */
    public int configuredSize() {
        return configuredSize;
    }

    /** The group sizes stored with the subscription's checkpoints, ascending. */
    public List<Integer> storedSizes() {
        return java.util.Arrays.stream(storedSizes).boxed().toList();
    }
}
