package dev.waymark.store.otel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.waymark.store.EventData;
import dev.waymark.store.EventStore;
import dev.waymark.store.ExpectedVersion;
import dev.waymark.store.InvalidInputException;
import dev.waymark.store.RecordedEvent;
import dev.waymark.store.TraceContext;
import dev.waymark.store.StoreFixture;
import dev.waymark.testkit.PostgresExtension;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class AppendTracingTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = StoreFixture.migratedPostgres();

    @Test
    void a_traced_append_makes_a_producer_span_whose_context_the_events_carry() {
        InMemorySpanExporter exporter = InMemorySpanExporter.create();
        OpenTelemetrySdk otel = OpenTelemetrySdk.builder()
                .setTracerProvider(
                        SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build())
                .build();
        try (EventStore store = EventStore.builder(POSTGRES.dataSource()).build()) {
            store.migrate();
            new AppendTracing(otel).append(store, "order-1", ExpectedVersion.noStream(),
                    List.of(EventData.json("OrderPlaced", "{}"), EventData.json("OrderPaid", "{}")));
            SpanData span = exporter.getFinishedSpanItems().getFirst();
            assertThat(span.getName()).isEqualTo("append order");
            assertThat(span.getKind()).isEqualTo(SpanKind.PRODUCER);
            List<RecordedEvent> events = store.readStreamForward("order-1", 0, 10);
            assertThat(events).hasSize(2).allSatisfy(e -> assertThat(TraceContext.traceparent(e.metadata()))
                    .contains("00-" + span.getTraceId() + "-" + span.getSpanId() + "-"
                            + span.getSpanContext().getTraceFlags().asHex()));
        }
    }

    @Test
    void bad_input_is_refused_as_the_store_refuses_it_and_starts_no_span() {
        InMemorySpanExporter exporter = InMemorySpanExporter.create();
        OpenTelemetrySdk otel = OpenTelemetrySdk.builder()
                .setTracerProvider(
                        SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build())
                .build();
        AppendTracing tracing = new AppendTracing(otel);
        try (EventStore store = EventStore.builder(POSTGRES.dataSource()).build()) {
            List<EventData> one = List.of(EventData.json("A", "{}"));
            // before: NullPointerExceptions from the span's name and attributes
            assertThatThrownBy(() -> tracing.append(store, null, ExpectedVersion.any(), one))
                    .isInstanceOf(InvalidInputException.class).hasMessage("stream name must not be null");
            assertThatThrownBy(() -> tracing.append(store, "order-1", ExpectedVersion.any(), null))
                    .isInstanceOf(InvalidInputException.class).hasMessage("events must not be null (stream order-1)");
            assertThatThrownBy(() -> tracing.append(store, "order-1", ExpectedVersion.any(),
                    Arrays.asList(EventData.json("A", "{}"), null))).isInstanceOf(InvalidInputException.class)
                    .hasMessage("event 1 of the append to stream 'order-1' is null");
            assertThat(exporter.getFinishedSpanItems()).isEmpty();
        }
    }
}
