package dev.waymark.workflow.internal;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.datatype.jdk8.Jdk8Module;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;

/**
 * The workflow module's one JSON mapper, with its modules pinned: {@link JavaTimeModule}
 * ({@code java.time} values as ISO-8601 text: {@code "2026-12-02T10:15:30Z"}, {@code "PT10M"}) and
 * {@link Jdk8Module} ({@code Optional} as its value or {@code null}), registered explicitly, so
 * the journal's format never depends on which Jackson modules happen to be on the class path
 * ({@code findAndRegisterModules()} is not called). It backs the default
 * {@link dev.waymark.workflow.WorkflowCodec#jackson() codec}, the journal envelopes and their reads;
 * the envelopes are written through its generator, never by concatenating JSON text.
 */
public final class WorkflowJson {

    /** The mapper; configured once, thread-safe. */
    public static final ObjectMapper MAPPER = JsonMapper.builder()
            .addModule(new JavaTimeModule())
            .addModule(new Jdk8Module())
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
            .disable(SerializationFeature.WRITE_DURATIONS_AS_TIMESTAMPS)
            .build();

    private WorkflowJson() {}

    private interface Fields {
        void write(JsonGenerator g) throws IOException;
    }

    private static String object(Fields fields) {
        StringWriter out = new StringWriter();
        try (JsonGenerator g = MAPPER.createGenerator(out)) {
            g.writeStartObject();
            fields.write(g);
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException("writing JSON to memory failed", e);
        }
        return out.toString();
    }

    /** {@code {"field": rawJson}}: {@code rawJson} (JSON text already validated) is written as it is. */
    public static String withRaw(String field, String rawJson) {
        return object(g -> {
            g.writeFieldName(field);
            g.writeRawValue(rawJson);
        });
    }

    /** {@code {"textField": "text", "rawField": rawJson}}, {@code text} escaped as a JSON string. */
    public static String withTextAndRaw(String textField, String text, String rawField, String rawJson) {
        return object(g -> {
            g.writeStringField(textField, text);
            g.writeFieldName(rawField);
            g.writeRawValue(rawJson);
        });
    }

    /** {@code {"field": "text"}}, {@code text} escaped as a JSON string. */
    public static String withText(String field, String text) {
        return object(g -> g.writeStringField(field, text));
    }

    /** {@code {"field": true}}. */
    public static String withTrue(String field) {
        return object(g -> g.writeBooleanField(field, true));
    }
}
