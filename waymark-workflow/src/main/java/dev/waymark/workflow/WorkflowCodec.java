package dev.waymark.workflow;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.waymark.workflow.internal.JacksonCodec;

/**
 * Turns inputs, step results and workflow results into JSON text and back. The default is Jackson
 * with a plain {@link ObjectMapper}; supply your own mapper (modules, naming) or codec.
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

    /** Jackson with a default {@link ObjectMapper}. */
    static WorkflowCodec jackson() {
        return new JacksonCodec(new ObjectMapper().findAndRegisterModules());
    }

    /** Jackson with the given mapper. */
    static WorkflowCodec jackson(ObjectMapper mapper) {
        return new JacksonCodec(mapper);
    }
}
