package dev.waymark.workflow.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.waymark.store.plumbing.Utf16;
import dev.waymark.workflow.exception.InvalidWorkflowInputException;
import dev.waymark.workflow.exception.StepDecodeException;
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
                    + (value == null ? "null" : value.getClass().getName()) + " to JSON: "
                    + Utf16.storable(e.getMessage()),
                    e);
        }
    }

    @Override
    public <T> T decode(String json, Class<T> type) {
        try {
            return mapper.readValue(json, type);
        } catch (JsonProcessingException | IllegalArgumentException e) {
            // Jackson's own message quotes the value too, cut at 500 characters: wherever a cut falls
            // inside a surrogate pair, its half is replaced, so the message can be stored and printed
            String shown = json.length() <= 120 ? json : Text.shorten(json, 117);
            throw new StepDecodeException("cannot read " + shown + " as " + type.getName() + ": "
                    + Utf16.storable(e.getMessage()), e);
        }
    }
}
