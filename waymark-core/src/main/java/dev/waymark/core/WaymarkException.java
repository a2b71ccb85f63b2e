package dev.waymark.core;

import java.io.Serial;

/**
 * Root of every exception Waymark throws, in every module. Unchecked; the message carries the state
 * that explains the failure and the cause is always kept.
 *
 * <p>Three branches are shared by every module, so that a caller can handle a kind of failure
 * without knowing which module raised it:
 *
 * <ul>
 *   <li>{@link WaymarkConfigException}: a builder or an options object was given an invalid value;
 *       thrown at {@code build()} / {@code start} before anything runs. Fix the configuration.
 *   <li>{@link WaymarkInputException}: the input of one call is invalid (a name, an id, a size, an
 *       encoding, a payload); nothing of the call was written. Fix the input.
 *   <li>{@code dev.waymark.store.StoreException} (in waymark-store, which core cannot see): the
 *       database failed or refused (classified by SQLSTATE, see its {@code isRetryable()}),
 *       including append conflicts and the subscription module's storage-state failures
 *       ({@code LeaseLostException}, ...).
 * </ul>
 *
 * <p>Other direct subclasses report the outcome of a run rather than a fault of the caller or the
 * database: the workflow module's {@code WorkflowException} (a workflow failed, was cancelled, ...)
 * and the messaging module's {@code MessagingException} (a processor or a source failed). Value
 * types (records such as {@code GlobalPosition}, {@code Envelope}) reject invalid components with
 * the JDK's {@link IllegalArgumentException}, as JDK value types do.
 */
public class WaymarkException extends RuntimeException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** A failure described by {@code message}. */
    public WaymarkException(String message) {
        super(message);
    }

    /** A failure described by {@code message}, caused by {@code cause} (may be null). */
    public WaymarkException(String message, Throwable cause) {
        super(message, cause);
    }
}
