package dev.waymark.cli;

import dev.waymark.store.EventStore;
import dev.waymark.subscription.CheckpointRow;
import dev.waymark.subscription.Checkpoints;
import dev.waymark.subscription.DeadLetters;
import dev.waymark.subscription.shard.ShardOwnership;
import dev.waymark.subscription.shard.ShardedSubscription;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.TreeSet;

/**
 * Checks the subscription, pool and worker names that commands take, before they act: an unknown
 * name is a {@link NotFoundException} naming it, with its close matches ("did you mean ...") or,
 * when none is close, the known names (at most {@value #LISTED}).
 */
final class Names {

    /** The most known names a message lists when none is close. */
    static final int LISTED = 10;
    /** The most close matches a message offers. */
    private static final int OFFERED = 3;

    private Names() {}

    /** The subscriptions that have a checkpoint (every started subscription, consumer-group member and pool). */
    static TreeSet<String> subscriptions(EventStore store) {
        TreeSet<String> names = new TreeSet<>();
        for (CheckpointRow row : Checkpoints.of(store).list(null)) {
            names.add(row.subscription());
        }
        return names;
    }

    /**
     * Requires a subscription with a checkpoint; with {@code orDeadLetters}, dead letters alone make it
     * known too (a subscription whose checkpoints were deleted may still have letters to replay).
     */
    static void requireSubscription(EventStore store, String name, boolean orDeadLetters) {
        TreeSet<String> known = subscriptions(store);
        if (!known.contains(name) && !(orDeadLetters && DeadLetters.of(store).count(name) > 0)) {
            throw unknown("no subscription named " + quote(name), name, known, "known");
        }
    }

    /** The pool's buckets; an unknown pool is refused, offering the subscriptions that are pools. */
    static List<ShardOwnership> requirePool(EventStore store, String name) {
        List<ShardOwnership> buckets = ShardedSubscription.ownership(store, name);
        if (!buckets.isEmpty()) {
            return buckets;
        }
        TreeSet<String> subscriptions = subscriptions(store);
        List<String> close = closeMatches(name, subscriptions).stream()
                .filter(s -> !ShardedSubscription.ownership(store, s).isEmpty()).limit(OFFERED).toList();
        String message = "no sharded subscription named " + quote(name);
        if (!close.isEmpty()) {
            throw new NotFoundException(message + didYouMean(close));
        }
        if (subscriptions.size() > 2 * LISTED) {
            throw new NotFoundException(message + " (see subscriptions status for the subscriptions)");
        }
        List<String> pools = subscriptions.stream().filter(s -> !ShardedSubscription.ownership(store, s).isEmpty())
                .toList();
        throw new NotFoundException(message + (pools.isEmpty()
                ? " (there is no pool in this schema)"
                : " (pools: " + list(pools) + ")"));
    }

    /** Requires {@code worker} to hold (or to have held, expired) a bucket of the pool. */
    static void requireWorker(String pool, List<ShardOwnership> buckets, String worker) {
        TreeSet<String> owners = new TreeSet<>();
        buckets.forEach(b -> b.owner().ifPresent(owners::add));
        if (owners.contains(worker)) {
            return;
        }
        String message = "worker " + quote(worker) + " holds no bucket of pool " + quote(pool);
        List<String> close = closeMatches(worker, owners);
        throw new NotFoundException(message + (!close.isEmpty()
                ? didYouMean(close)
                : owners.isEmpty() ? " (no bucket has an owner)" : " (bucket owners: " + list(owners) + ")"));
    }

    /** Refuses {@code name}, offering its close matches among {@code known}, or {@code known} itself. */
    static NotFoundException unknown(String message, String name, Collection<String> known, String label) {
        List<String> close = closeMatches(name, known);
        if (!close.isEmpty()) {
            return new NotFoundException(message + didYouMean(close));
        }
        if (known.isEmpty()) {
            return new NotFoundException(message + " (there are none in this schema)");
        }
        return new NotFoundException(message + "; " + label + ": " + list(known));
    }

    /** A suffix offering close matches: {@code (did you mean 'a'?)} or {@code (did you mean 'a' or 'b'?)}. */
    static String didYouMean(List<String> close) {
        List<String> quoted = close.stream().map(Names::quote).toList();
        return " (did you mean " + String.join(" or ", quoted) + "?)";
    }

    /**
     * The known names closest to {@code name}, best first, at most {@value #OFFERED}: those within a
     * small edit distance (a third of the name's length, at least 2, ignoring case), and those that
     * contain it or that it contains (a shortened or lengthened name).
     */
    static List<String> closeMatches(String name, Collection<String> known) {
        String wanted = name.toLowerCase(Locale.ROOT);
        int within = Math.max(2, wanted.length() / 3);
        record Scored(String name, int distance) {}
        return known.stream().filter(k -> !k.equals(name)).map(k -> {
            String candidate = k.toLowerCase(Locale.ROOT);
            int distance = distance(wanted, candidate);
            boolean nested = wanted.length() >= 3 && (candidate.contains(wanted) || wanted.contains(candidate));
            return distance <= within || nested ? new Scored(k, distance) : null;
        }).filter(Objects::nonNull).sorted(Comparator.comparingInt(Scored::distance).thenComparing(Scored::name))
                .limit(OFFERED).map(Scored::name).toList();
    }

    /** Levenshtein distance, with two rows. */
    private static int distance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int substitute = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitute, Math.min(previous[j], current[j - 1]) + 1);
            }
            int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }

    /** At most {@value #LISTED} names, comma-separated, with how many more there are. */
    static String list(Collection<String> names) {
        List<String> shown = names.stream().limit(LISTED).map(Output::cell).toList();
        int more = names.size() - shown.size();
        return String.join(", ", shown) + (more > 0 ? " and " + more + " more" : "");
    }

    /** A name in single quotes, its control characters escaped (see {@link Output#cell}). */
    static String quote(String name) {
        return "'" + Output.cell(name) + "'";
    }
}
