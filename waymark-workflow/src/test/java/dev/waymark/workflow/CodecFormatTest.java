package dev.waymark.workflow;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonSerializer;
import com.fasterxml.jackson.databind.Module;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.module.SimpleModule;
import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The default codec's JSON (the journal's format) is pinned: it does not depend on the class path. */
class CodecFormatTest {

    record Booking(Instant at, Duration stay, LocalDate day, Optional<String> note, Optional<String> none) {}

    private static final Booking BOOKING = new Booking(Instant.parse("2026-12-02T10:15:30.123Z"),
            Duration.ofMinutes(90), LocalDate.of(2026, 12, 2), Optional.of("window"), Optional.empty());

    private static final String EXPECTED = "{\"at\":\"2026-12-02T10:15:30.123Z\",\"stay\":\"PT1H30M\","
            + "\"day\":\"2026-12-02\",\"note\":\"window\",\"none\":null}";

    /** A module that, if it were discovered, would change how every Instant is written. */
    public static final class LoudInstants extends SimpleModule {
        private static final long serialVersionUID = 1L;

        /** Registers the serializer. */
        public LoudInstants() {
            super("loud-instants");
            addSerializer(Instant.class, new JsonSerializer<>() {
                @Override
                public void serialize(Instant value, JsonGenerator g, SerializerProvider p) throws IOException {
                    g.writeString("LOUD");
                }
            });
        }
    }

    @Test
    void java_time_and_optional_values_are_written_as_iso_8601_text_and_read_back() {
        WorkflowCodec codec = WorkflowCodec.jackson();
        assertThat(codec.encode(BOOKING)).isEqualTo(EXPECTED);
        assertThat(codec.decode(EXPECTED, Booking.class)).isEqualTo(BOOKING);
        // the form journals written with jsr310's defaults hold (a number of seconds) still reads
        assertThat(codec.decode("1796206530.123000000", Instant.class)).isEqualTo(BOOKING.at());
    }

    @Test
    void a_jackson_module_on_the_class_path_does_not_change_the_journal_format(@TempDir Path dir) throws Exception {
        // before: jackson() called findAndRegisterModules(), which registers every Module that the
        // ServiceLoader finds through the context class loader: this one would write "LOUD"
        Path services = dir.resolve("META-INF/services");
        Files.createDirectories(services);
        Files.writeString(services.resolve(Module.class.getName()), LoudInstants.class.getName() + "\n",
                StandardCharsets.UTF_8);
        Thread thread = Thread.currentThread();
        ClassLoader original = thread.getContextClassLoader();
        try (URLClassLoader withModule = new URLClassLoader(new URL[]{dir.toUri().toURL()}, original)) {
            thread.setContextClassLoader(withModule);
            assertThat(new com.fasterxml.jackson.databind.ObjectMapper().findAndRegisterModules()
                    .writeValueAsString(BOOKING.at())).as("the module is discoverable").isEqualTo("\"LOUD\"");
            assertThat(WorkflowCodec.jackson().encode(BOOKING)).isEqualTo(EXPECTED);
        } finally {
            thread.setContextClassLoader(original);
        }
    }
}
