package dev.waymark.cli;

/**
 * A name or id the operator gave that the database does not know (a subscription, pool, worker,
 * stream, workflow, awakeable or dead letter): the command changes nothing and exits
 * {@link WaymarkCli#NOT_FOUND}. The message names it and, where there are any, its close matches.
 */
final class NotFoundException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    NotFoundException(String message) {
        super(message);
    }
}
