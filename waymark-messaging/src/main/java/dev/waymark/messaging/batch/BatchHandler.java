package dev.waymark.messaging.batch;

import dev.waymark.messaging.Message;
import java.util.List;

/** Decides about a batch of messages that share a key. A thrown exception retries every message of the batch. */
@FunctionalInterface
public interface BatchHandler {

    /** Handles a batch. */
    BatchAck handle(BatchInfo info, List<Message> messages) throws Exception;
}
