package dev.waymark.messaging.internal;

import dev.waymark.messaging.MessageSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one call of a processor's {@link MessageSource#shutdown()}: made by an app's stop, or earlier
 * when the processor fails, whichever comes first; the other only learns how it went.
 */
final class SourceShutdown {

    private static final Logger log = LoggerFactory.getLogger(SourceShutdown.class);

    private final String processorId;
    private final MessageSource source;
    private boolean called;
    private Exception failure;

    SourceShutdown(String processorId, MessageSource source) {
        this.processorId = processorId;
        this.source = source;
    }

    /**
     * Calls {@code shutdown()} the first time; waits for that call if it is running.
     *
     * @return the failure of that call, or null
     */
    synchronized Exception run() {
        if (!called) {
            called = true;
            try {
                source.shutdown();
            } catch (Exception e) {
                log.warn("source {} of processor {} failed to shut down: {}", source.name(), processorId, e.toString());
                failure = e;
            }
        }
        return failure;
    }
}
