package dev.waymark.workflow;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.waymark.workflow.internal.JacksonCodec;

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
     * Jackson with a new {@link ObjectMapper} on which {@link ObjectMapper#findAndRegisterModules()}
     * was called: every Jackson module that {@link java.util.ServiceLoader} finds through the calling
     * thread's context class loader is registered (for example {@code jackson-datatype-jsr310} for
     * {@code java.time} types, {@code jackson-datatype-jdk8} for {@code Optional},
     * {@code jackson-module-parameter-names}, {@code jackson-module-kotlin}); Waymark brings none
     * itself. Everything else is Jackson's default (with {@code jsr310}, an {@code Instant} is
     * written as a number of seconds, as {@code WRITE_DATES_AS_TIMESTAMPS} is on).
     *
     * <p>So the classpath shapes the journal: adding or removing a module between deploys can change
     * the JSON a value is written as and how earlier runs' journaled inputs and step results decode
     * on replay (a {@link StepDecodeException}, or another value), and two processes with different
     * modules can write different JSON for the same input (a second {@code start} of the same id then
     * conflicts). Give every process the same modules, or pass an explicitly configured mapper to
     * {@link #jackson(ObjectMapper)}.
     */
    static WorkflowCodec jackson() {
        return new JacksonCodec(new ObjectMapper().findAndRegisterModules());
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
