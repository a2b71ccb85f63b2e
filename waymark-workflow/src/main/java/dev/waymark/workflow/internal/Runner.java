package dev.waymark.workflow.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.waymark.workflow.status.JournalEntry;
import dev.waymark.workflow.exception.StepDecodeException;
import dev.waymark.workflow.Workflow;
import dev.waymark.workflow.exception.WorkflowException;
import dev.waymark.workflow.exception.WorkflowLeaseLostException;
import dev.waymark.workflow.status.WorkflowOutcome;
import dev.waymark.workflow.WorkflowRegistry;
import dev.waymark.workflow.status.WorkflowStatus;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;

/**
 * Runs an instance: loads the current generation's journal, invokes the body with a replaying
 * context, and turns how the body ended into an outcome. Continue-as-new loops to the next
 * generation, so a call returns only when the workflow is suspended or terminal.
 */
public final class Runner {

    /**
     * How a run ended, whether it journaled anything new, and whether it journaled the terminal
     * marker itself (which also released its lease).
     */
    public record Attempt(WorkflowOutcome<?> outcome, boolean progressed, boolean released) {
        Attempt(WorkflowOutcome<?> outcome, boolean progressed) {
            this(outcome, progressed, false);
        }
    }

    private final EngineRuntime rt;
    /** Where runs may wait in memory (see {@link HeldWaits}); null: they suspend at once. */
    private final HeldWaits holds;

    /** A runner over the shared runtime whose runs suspend at once. */
    public Runner(EngineRuntime rt) {
        this(rt, null);
    }

    /** A runner over the shared runtime whose runs may wait in {@code holds} (null: none). */
    public Runner(EngineRuntime rt, HeldWaits holds) {
        this.rt = rt;
        this.holds = holds;
    }

    /**
     * Runs {@code name}/{@code id} under lease {@code epoch} (null: unfenced). With
     * {@code freshInput} the caller just created the instance, so the journal is known to be empty.
     */
    public Attempt run(String name, String id, Long epoch, String freshInput) throws Exception {
        WorkflowRegistry.Definition<?, ?> def = rt.registry.require(name);
        boolean progressed = false;
        String input = freshInput;
        int generation = 0;
        Map<String, String> journal = new HashMap<>();
        while (true) {
            if (input == null) {
                Instances.Row row = rt.instances.find(name, id).orElseThrow(() -> new WorkflowException(
                        "workflow " + name + "/" + id + " does not exist"));
                if (row.info().status().isTerminal()) {
                    return new Attempt(terminal(def, row), progressed);
                }
                generation = row.info().generation();
                journal = new HashMap<>();
                input = load(name, id, generation, journal);
            }
            Attempt a = runGeneration(def, name, id, generation, epoch, input, journal);
            progressed |= a.progressed();
            if (!(a.outcome() instanceof WorkflowOutcome.ContinuedAsNew)) {
                return new Attempt(a.outcome(), progressed, a.released());
            }
            input = null;
        }
    }

    private String load(String name, String id, int generation, Map<String, String> journal) {
        String input = null;
        for (JournalEntry e : rt.instances.journal(name, id, generation)) {
            JsonNode data = parse(e.data(), name, id);
            switch (e.type()) {
                case "WorkflowStarted" -> input = data.get("input").toString();
                case "StepRecorded" -> journal.putIfAbsent(e.step(), data.get("result").toString());
                default -> {
                } // lifecycle markers carry no step
            }
        }
        if (input == null) {
            throw new WorkflowException("journal of workflow " + name + "/" + id + " generation " + generation
                    + " has no WorkflowStarted entry");
        }
        return input;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private Attempt runGeneration(WorkflowRegistry.Definition<?, ?> def, String name, String id, int generation,
            Long epoch, String inputJson, Map<String, String> journal) throws Exception {
        RunContext ctx = new RunContext(rt, name, id, generation, epoch, journal, holds);
        Object input = rt.codec.decode(inputJson, def.inputType());
        Workflow body = def.factory().get();
        try {
            Object result = body.run(ctx, input);
            String json = rt.encode(result, "result of workflow " + name + "/" + id);
            Instances.Appended a = rt.instances.appendEntry(JournalWrite.completion(name, id, generation,
                    Ids.entryId(name, id, generation, "__completed__"), json, epoch));
            return switch (a.kind()) {
                case APPENDED -> {
                    rt.signal();
                    yield new Attempt(new WorkflowOutcome.Completed<>(rt.codec.decode(json, def.resultType())), true,
                            true);
                }
                case PRESENT -> new Attempt(new WorkflowOutcome.Completed<>(
                        rt.codec.decode(a.detail(), def.resultType())), ctx.progressed());
                case REFUSED -> new Attempt(terminalNow(def, name, id), ctx.progressed());
                case LEASE_LOST -> throw new WorkflowLeaseLostException("workflow " + name + "/" + id
                        + ": lease epoch " + epoch + " was taken over before completion was journaled");
                case STALE, MISSING, BUSY ->
                    throw new WorkflowException("cannot journal completion of workflow " + name + "/" + id
                            + ": " + a.kind() + " " + a.detail());
            };
        } catch (Unwind.Suspend s) {
            return new Attempt(new WorkflowOutcome.Suspended<>(s.getMessage()), ctx.progressed());
        } catch (Unwind.Terminal t) {
            return new Attempt(terminalNow(def, name, id), ctx.progressed());
        } catch (Unwind.Rotate r) {
            SqlOutcomes.Rotate outcome = rt.instances.rotate(name, id, generation, epoch, r.seed);
            return switch (outcome) {
                case ROTATED -> {
                    rt.signal();
                    yield new Attempt(new WorkflowOutcome.ContinuedAsNew<>(generation + 1), true);
                }
                case LEASE_LOST -> throw new WorkflowLeaseLostException("workflow " + name + "/" + id
                        + ": lease epoch " + epoch + " was taken over before continue-as-new");
                case COMPLETED, CANCELLED, FAILED -> new Attempt(terminalNow(def, name, id), ctx.progressed());
                case MISSING, STALE ->
                    throw new WorkflowException("cannot continue workflow " + name + "/" + id + " as new: "
                            + outcome);
            };
        }
    }

    private WorkflowOutcome<?> terminalNow(WorkflowRegistry.Definition<?, ?> def, String name, String id) {
        return terminal(def, rt.instances.find(name, id).orElseThrow(() -> new WorkflowException(
                "workflow " + name + "/" + id + " disappeared")));
    }

    /** The outcome recorded in a terminal instance row. */
    public WorkflowOutcome<?> terminal(WorkflowRegistry.Definition<?, ?> def, Instances.Row row) {
        return terminalOutcome(row, rt.codec, def.resultType());
    }

    /** The outcome recorded in a terminal instance row, its result read as {@code type}. */
    public static <T> WorkflowOutcome<T> terminalOutcome(Instances.Row row, dev.waymark.workflow.WorkflowCodec codec,
            Class<T> type) {
        return switch (row.info().status()) {
            case COMPLETED -> new WorkflowOutcome.Completed<>(codec.decode(row.result(), type));
            case CANCELLED -> new WorkflowOutcome.Cancelled<>();
            case FAILED -> new WorkflowOutcome.Failed<>(String.valueOf(row.info().failure()));
            default -> throw new IllegalStateException("not terminal: " + row.info().status());
        };
    }

    private static JsonNode parse(String json, String name, String id) {
        try {
            return WorkflowJson.MAPPER.readTree(json);
        } catch (IOException e) {
            throw new StepDecodeException("journal of workflow " + name + "/" + id + " holds invalid JSON", e);
        }
    }

}
