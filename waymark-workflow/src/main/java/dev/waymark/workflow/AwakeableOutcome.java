package dev.waymark.workflow;

/** What completing, failing or cancelling an awakeable did. Only {@link #SETTLED} changed anything. */
public enum AwakeableOutcome {
    /** This call settled the awakeable and woke its workflow. */
    SETTLED,
    /** It had already been completed; the first value stands. */
    ALREADY_COMPLETED,
    /** It had already been failed. */
    ALREADY_FAILED,
    /** It had already been cancelled. */
    ALREADY_CANCELLED,
    /** Its generation was closed by continue-as-new, or its workflow ended; nobody waits for it. */
    SUPERSEDED,
    /** No awakeable has this id. */
    UNKNOWN
}
