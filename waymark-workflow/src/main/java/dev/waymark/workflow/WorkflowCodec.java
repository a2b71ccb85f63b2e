package dev.waymark.workflow;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.waymark.workflow.exception.InvalidWorkflowInputException;
import dev.waymark.workflow.exception.StepDecodeException;
import dev.waymark.workflow.internal.JacksonCodec;
import dev.waymark.workflow.internal.WorkflowJson;

/**
 * Turns inputs, step results and workflow results into JSON text and back. The default is
 * {@link #jackson()}: Jackson with the Jackson modules found on the classpath; supply your own
 * mapper (modules, naming) or codec to fix the JSON shape. Journaled values are decoded by the
 * codec of the process that replays them, so every process that runs or starts a workflow needs a
 * codec that reads what the others wrote.
 */
public interface WorkflowCodec {

    /**
     * The JSON text of {@code value}.
     *
     * @throws InvalidWorkflowInputException if it cannot be serialized
     */
    String encode(Object value);

    /**
     * Reads {@code json} as {@code type}.
     *
     * @throws StepDecodeException if it cannot be read as that type
     */
    <T> T decode(String json, Class<T> type);

    /**
     * Jackson with Waymark's mapper, whose modules are pinned: {@code jackson-datatype-jsr310} and
     * {@code jackson-datatype-jdk8} are registered explicitly, nothing is discovered on the class path
     * ({@code findAndRegisterModules()} is not called), so adding or removing a Jackson module between
     * deploys does not change the journal. {@code java.time} values are written as ISO-8601 text
     * ({@code Instant} {@code "2026-12-02T10:15:30Z"}, {@code Duration} {@code "PT10M"}, {@code LocalDate}
     * {@code "2026-12-02"}) and read from it (or from the numbers older journals hold); an
     * {@code Optional} as its value or {@code null}; records through their canonical constructor;
     * everything else is Jackson's default. For other modules (Kotlin, parameter names, your own
     * serializers) pass a mapper of your own to {@link #jackson(ObjectMapper)}, configured the same in
     * every process.
     */
    static WorkflowCodec jackson() {
        return new JacksonCodec(WorkflowJson.MAPPER);
    }

    /**
     * Jackson with the given mapper, used as it is (no module is added).
     *
     * @throws InvalidWorkflowInputException if {@code mapper} is null
     */
    static WorkflowCodec jackson(ObjectMapper mapper) {
        return new JacksonCodec(mapper);
    }
}
