package dev.waymark.workflow.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.waymark.workflow.exception.InvalidWorkflowInputException;
import dev.waymark.workflow.exception.StepDecodeException;
import dev.waymark.workflow.exception.WorkflowException;
import java.io.IOException;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The values in one run's journal: a fresh step's result encoded for it, a journaled one decoded,
 * and the envelopes of await steps (what an awakeable or a child ended with: {@code ok},
 * {@code failed} or {@code cancelled}) made from their rows and opened again.
 */
final class JournalValues {

    private final EngineRuntime rt;
    private final String name;
    private final String id;

    JournalValues(EngineRuntime rt, String name, String id) {
        this.rt = rt;
        this.name = name;
        this.id = id;
    }

    /** The envelope of a settled awakeable (ok, failed or cancelled); null while it is pending. */
    String awakeable(UUID awakeable) {
        Awakeables.State s = rt.instances.awakeables().sharedState(awakeable).orElseThrow(() -> new WorkflowException(
                "awakeable " + awakeable + " of workflow " + name + "/" + id + " is missing"));
        return switch (SqlOutcomes.AwakeableStatus.fromSql(s.status())) {
            case PENDING -> null;
            case COMPLETED -> WorkflowJson.withRaw("ok", s.payload());
            case FAILED -> WorkflowJson.withText("failed", String.valueOf(s.failure()));
            case CANCELLED, ABANDONED -> WorkflowJson.withTrue("cancelled");
        };
    }

    /**
     * The envelope of an ended child (ok, failed or cancelled); null while it runs. Its row is left in
     * {@code seen[0]}.
     */
    String child(Instances.Key child, Instances.Row[] seen) {
        Instances.Row row = rt.instances.find(child.name(), child.id()).orElseThrow(() -> new WorkflowException(
                "child workflow " + child.name() + "/" + child.id() + " of " + name + "/" + id + " is missing"));
        seen[0] = row;
        return switch (row.info().status()) {
            case COMPLETED -> WorkflowJson.withRaw("ok", row.result());
            case FAILED -> WorkflowJson.withText("failed", String.valueOf(row.info().failure()));
            case CANCELLED -> WorkflowJson.withTrue("cancelled");
            default -> null;
        };
    }

    /** The value an envelope holds, or the exception of its failure or cancellation. */
    <T> T open(String envelope, Class<T> type, String key, Function<String, RuntimeException> failed,
            Supplier<RuntimeException> cancelled) {
        JsonNode node;
        try {
            node = WorkflowJson.MAPPER.readTree(envelope);
        } catch (IOException e) {
            throw new StepDecodeException("journal entry '" + key + "' of " + name + "/" + id + " is not JSON", e);
        }
        if (node.has("ok")) {
            return decode(node.get("ok").toString(), type, key);
        }
        if (node.has("failed")) {
            throw failed.apply(node.get("failed").asText());
        }
        throw cancelled.get();
    }

    /** The journaled {@code json} of entry {@code key} as a {@code type}. */
    <T> T decode(String json, Class<T> type, String key) {
        try {
            return rt.codec.decode(json, type);
        } catch (StepDecodeException e) {
            throw new StepDecodeException("journal entry '" + key + "' of workflow " + name + "/" + id + ": "
                    + e.getMessage(), e);
        }
    }

    /**
     * The JSON of a fresh step's result. A result that cannot be journaled (no serializer, too large,
     * a NUL) would fail the same way on every attempt, each running the action (its side effect)
     * again: the run unwinds and the workflow fails at once instead.
     */
    String journalable(String key, Class<?> type, Object value) {
        try {
            return rt.encode(value, "result of step '" + Text.escape(key) + "' of " + name + "/" + Text.escape(id));
        } catch (InvalidWorkflowInputException e) {
            throw new Unwind.Fail(new InvalidWorkflowInputException("step '" + Text.escape(key) + "' of workflow "
                    + name + "/" + Text.escape(id) + " returned a "
                    + (value == null ? "null" : value.getClass().getName())
                    + " (declared " + type.getName() + ") that cannot be journaled: " + e.getMessage() + "; the"
                    + " workflow fails at once, since every attempt would run the action again to the same end: make"
                    + " the result journalable, then retry the workflow", e));
        }
    }
}
