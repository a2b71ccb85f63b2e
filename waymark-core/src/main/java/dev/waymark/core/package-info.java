/**
 * The shared vocabulary of every Waymark module: the types that the event store, subscriptions,
 * workflows, the messaging runtime and the Kafka adapter all speak, so that one word means one thing
 * across the API.
 *
 * <ul>
 *   <li>{@link dev.waymark.core.RetryPolicy}: how often and how soon a failed operation is tried
 *       again, and the one backoff computation.</li>
 *   <li>{@link dev.waymark.core.Stoppable}: the lifecycle contract of every long-lived component
 *       ({@code stop(Duration)} answers whether it stopped in time; {@code close()}).</li>
 *   <li>{@link dev.waymark.core.DeadLetterReason}: why an event or a message was given up on.</li>
 *   <li>{@link dev.waymark.core.WaymarkException}: the root of every Waymark exception, with the
 *       branches every module shares: {@link dev.waymark.core.WaymarkConfigException} (invalid
 *       configuration) and {@link dev.waymark.core.WaymarkInputException} (invalid input of one call).
 *       The storage branch, {@code dev.waymark.store.StoreException}, lives in the store: only the
 *       modules backed by PostgreSQL throw it.</li>
 * </ul>
 *
 * <p>The module {@code waymark-core} depends on the JDK only, so a module that needs nothing of
 * PostgreSQL (the messaging runtime, the Kafka adapter) speaks this vocabulary without pulling the
 * store's dependencies (pgjdbc, HikariCP, Flyway, Jackson).
 */
package dev.waymark.core;
