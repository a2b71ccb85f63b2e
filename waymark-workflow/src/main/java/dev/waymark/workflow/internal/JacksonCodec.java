package dev.waymark.workflow.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.waymark.workflow.InvalidWorkflowInputException;
import dev.waymark.workflow.StepDecodeException;
import dev.waymark.workflow.WorkflowCodec;

/** The default codec: Jackson. */
public final class JacksonCodec implements WorkflowCodec {

    private final ObjectMapper mapper;

    /** Uses {@code mapper}. */
    public JacksonCodec(ObjectMapper mapper) {
        this.mapper = Args.notNull(mapper, "mapper");
    }

    @Override
    public String encode(Object value) {
        try {
            return mapper.writeValueAsString(value);
        } catch (JsonProcessingException | IllegalArgumentException e) {
            throw new InvalidWorkflowInputException("cannot serialize "
                    + (value == null ? "null" : value.getClass().getName()) + " to JSON: " + e.getMessage(), e);
        }
    }

    @Override
    public <T> T decode(String json, Class<T> type) {
        try {
            return mapper.readValue(json, type);
        } catch (JsonProcessingException | IllegalArgumentException e) {
            throw new StepDecodeException("cannot read " + abbreviate(json) + " as " + type.getName() + ": "
                    + e.getMessage(), e);
        }
    }

    private static String abbreviate(String json) {
        return json.length() <= 120 ? json : json.substring(0, 117) + "...";
    }
}
