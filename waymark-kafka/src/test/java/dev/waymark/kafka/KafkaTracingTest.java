package dev.waymark.kafka;

import static dev.waymark.kafka.TestKafka.bytes;
import static dev.waymark.kafka.TestKafka.text;
import static org.assertj.core.api.Assertions.assertThat;

import dev.waymark.core.DeadLetterReason;
import dev.waymark.kafka.internal.RecordConverter;
import dev.waymark.kafka.otel.KafkaTracing;
import dev.waymark.messaging.AckDecision;
import dev.waymark.messaging.Concurrency;
import dev.waymark.messaging.ProcessingApp;
import dev.waymark.messaging.otel.MessageTracing;
import dev.waymark.testkit.KafkaExtension;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A producer span per dead-letter publication, child of the record's trace, carried by the dead letter;
 * and the Kafka attributes (system, partition, offset) on the consume span of each record.
 */
class KafkaTracingTest {

    @RegisterExtension
    static final KafkaExtension KAFKA = new KafkaExtension();

    private final TestKafka kafka = new TestKafka(KAFKA);

    @Test
    void a_dead_letter_publication_is_a_span_in_the_records_trace_and_the_dead_letter_carries_it() throws Exception {
        InMemorySpanExporter exporter = InMemorySpanExporter.create();
        OpenTelemetrySdk otel = OpenTelemetrySdk.builder()
                .setTracerProvider(
                        SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build())
                .build();
        String topic = KAFKA.createTopic("traced", 1);
        String dlt = KAFKA.createTopic("traced.DLT", 1);
        ProducerRecord<byte[], byte[]> bad = new ProducerRecord<>(topic, 0, bytes("order-9"), bytes("{broken"));
        bad.headers().add("traceparent", bytes("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"));
        kafka.send(bad);
        String group = kafka.group();
        ProcessingApp app = ProcessingApp.builder().processor("p",
                KafkaSource.of(kafka.config(group, topic).listener(new KafkaTracing(otel)).build()),
                Concurrency.serial(),
                m -> AckDecision.deadLetter(DeadLetterReason.invalid("not JSON")))
                .build().start();
        kafka.awaitCommittedThenStop(app, group, topic, 1);
        SpanData span = exporter.getFinishedSpanItems().stream().filter(s -> s.getName().equals("publish " + dlt))
                .findFirst().orElseThrow();
        assertThat(span.getKind()).isEqualTo(SpanKind.PRODUCER);
        assertThat(span.getTraceId()).isEqualTo("0af7651916cd43dd8448eb211c80319c");
        assertThat(span.getParentSpanId()).isEqualTo("b7ad6b7169203331");
        ConsumerRecord<byte[], byte[]> dead = kafka.readAll(dlt, 1).get(0);
        assertThat(text(dead.headers().lastHeader("traceparent").value()))
                .isEqualTo("00-0af7651916cd43dd8448eb211c80319c-" + span.getSpanId() + "-01");
    }

    @Test
    void with_two_traceparent_headers_the_publication_joins_the_first_as_the_envelope_does() {
        InMemorySpanExporter exporter = InMemorySpanExporter.create();
        OpenTelemetrySdk otel = OpenTelemetrySdk.builder()
                .setTracerProvider(
                        SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build())
                .build();
        ConsumerRecord<byte[], byte[]> original = new ConsumerRecord<>("orders", 0, 7, 0L, TimestampType.CREATE_TIME,
                -1, -1, bytes("k"), bytes("v"), new RecordHeaders(),
                Optional.empty());
        original.headers().add("traceparent", bytes("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"));
        original.headers().add("traceparent", bytes("00-11111111111111111111111111111111-2222222222222222-01"));
        original.headers().add(DeadLetterHeaders.REASON, bytes("an earlier dead letter's reason"));
        ProducerRecord<byte[], byte[]> out = new ProducerRecord<>("orders.DLT", null, original.key(), original.value(),
                original.headers());
        out.headers().add(DeadLetterHeaders.REASON, bytes("invalid payload: not JSON"));

        new KafkaTracing(otel).publishing(original, out).end(null);

        SpanData span = exporter.getFinishedSpanItems().get(0);
        assertThat(RecordConverter.toEnvelope(original, 0, KafkaOrdering.KEY).traceparent())
                .isEqualTo("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
        assertThat(span.getTraceId()).isEqualTo("0af7651916cd43dd8448eb211c80319c");
        assertThat(span.getParentSpanId()).isEqualTo("b7ad6b7169203331");
        assertThat(span.getAttributes().get(AttributeKey.stringKey("waymark.dlt.reason")))
                .isEqualTo("invalid payload: not JSON");
    }

    @Test
    void a_consumed_records_span_says_kafka_with_its_partition_and_offset() throws Exception {
        InMemorySpanExporter exporter = InMemorySpanExporter.create();
        OpenTelemetrySdk otel = OpenTelemetrySdk.builder()
                .setTracerProvider(
                        SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build())
                .build();
        String topic = KAFKA.createTopic("consume-span", 2);
        kafka.produce(topic, 1, 3, 1); // offsets 0-2 of partition 1
        String group = kafka.group();
        ProcessingApp app = ProcessingApp.builder().processor("payments",
                KafkaSource.of(kafka.config(group, topic).build()), Concurrency.serial(),
                MessageTracing.wrap(otel, "payments", m -> AckDecision.ok())).build().start();
        kafka.awaitCommittedThenStop(app, group, topic, 2);
        SpanData span = exporter.getFinishedSpanItems().stream()
                .filter(s -> (topic + "-1-2")
                        .equals(s.getAttributes().get(AttributeKey.stringKey("messaging.message.id"))))
                .findFirst().orElseThrow();
        assertThat(span.getKind()).isEqualTo(SpanKind.CONSUMER);
        assertThat(span.getAttributes().get(AttributeKey.stringKey("messaging.system"))).isEqualTo("kafka");
        assertThat(span.getAttributes().get(AttributeKey.longKey("messaging.kafka.destination.partition")))
                .isEqualTo(1L);
        assertThat(span.getAttributes().get(AttributeKey.longKey("messaging.kafka.message.offset"))).isEqualTo(2L);
    }
}
