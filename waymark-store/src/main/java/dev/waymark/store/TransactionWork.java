package dev.waymark.store;

/**
 * Work done inside {@link EventStore#inTransaction(TransactionWork)}.
 *
 * @param <T> the result
 * @param <E> the checked exception the work may throw; it reaches the caller unchanged
 */
@FunctionalInterface
public interface TransactionWork<T, E extends Exception> {

    /**
     * Does the work; returning commits, throwing rolls back. May be called more than once for one
     * transaction (see {@link EventStore#inTransaction(TransactionWork)}): each call after the first
     * runs in a fresh transaction, the earlier one rolled back.
     */
    T run(StoreTransaction transaction) throws E;
}
