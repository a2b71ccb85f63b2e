package dev.waymark.store;

/**
 * Work done inside {@link EventStore#inTransaction(TransactionWork)}.
 *
 * @param <T> the result
 * @param <E> the checked exception the work may throw; it reaches the caller unchanged
 */
@FunctionalInterface
public interface TransactionWork<T, E extends Exception> {

    /** Does the work; returning commits, throwing rolls back. */
    T run(StoreTransaction transaction) throws E;
}
