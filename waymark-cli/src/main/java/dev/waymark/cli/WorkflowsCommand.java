package dev.waymark.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.waymark.workflow.WorkflowClient;
import dev.waymark.workflow.status.WorkflowStatus;
import java.util.Arrays;
import java.util.Iterator;
import java.util.UUID;
import java.util.function.Function;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.TypeConversionException;

/** {@code waymark workflows list|show|cancel|retry|complete-awakeable|fail-awakeable|collect}. */
@Command(name = "workflows", description = "Inspect, cancel, retry and collect workflows; settle awakeables.", subcommands = {
        ListWorkflows.class, ShowWorkflow.class, CancelWorkflow.class, RetryWorkflow.class,
        AwakeableCommands.CompleteAwakeable.class, AwakeableCommands.FailAwakeable.class, CollectWorkflows.class})
final class WorkflowsCommand {

    @ParentCommand
    WaymarkCli root;

    /** Runs {@code work} with a workflow client (one that never runs workflows) on the configured database. */
    <T> T withClient(Function<WorkflowClient, T> work) {
        return root.withStore(store -> work.apply(WorkflowClient.create(store)));
    }

    /**
     * As {@link #withClient}, on a store with notifications on, so that what the client changes is
     * announced as the API announces it: a cancellation is broadcast to the engines (the one running
     * the body stops it before its next step), and a settlement or a retry sends the store's NOTIFY,
     * which wakes pushed resume workers at once instead of at their next poll.
     */
    <T> T withAnnouncingClient(Function<WorkflowClient, T> work) {
        return root.withStore(true, store -> work.apply(WorkflowClient.create(store)));
    }

    /** The failure of a subcommand given a workflow that does not exist (exit code 5). */
    static NotFoundException unknown(String name, String id) {
        return new NotFoundException("no workflow " + Names.quote(name + "/" + id));
    }

    /** Parses a status as stored: running, suspended, completed, cancelled or failed. */
    static final class StatusConverter implements ITypeConverter<WorkflowStatus> {
        @Override
        public WorkflowStatus convert(String value) {
            try {
                return WorkflowStatus.fromSql(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException("'" + value + "' is not a workflow status; use one of "
                        + String.join(", ", new StatusCandidates()));
            }
        }
    }

    /** The statuses, as {@code --status} takes them. */
    static final class StatusCandidates implements Iterable<String> {
        @Override
        public Iterator<String> iterator() {
            return Arrays.stream(WorkflowStatus.values()).map(WorkflowStatus::sqlValue).iterator();
        }
    }

    /** Parses an awakeable id. */
    static final class UuidConverter implements ITypeConverter<UUID> {
        @Override
        public UUID convert(String value) {
            try {
                return UUID.fromString(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException("'" + value + "' is not an awakeable id (a UUID, as printed by "
                        + "workflows show)");
            }
        }
    }

    /** Parses a JSON document. */
    static final class JsonConverter implements ITypeConverter<JsonNode> {
        @Override
        public JsonNode convert(String value) {
            try {
                JsonNode node = WaymarkCli.JSON.readTree(value);
                if (node == null || node.isMissingNode()) {
                    throw new TypeConversionException(
                            "empty, expected a JSON value such as '\"yes\"' or '{\"ok\":true}'");
                }
                return node;
            } catch (JsonProcessingException e) {
                throw new TypeConversionException("not valid JSON (" + e.getOriginalMessage()
                        + "); quote a string as '\"text\"'");
            }
        }
    }
}
