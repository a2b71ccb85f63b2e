package dev.waymark.kafka;

import static dev.waymark.kafka.TestKafka.bytes;
import static dev.waymark.kafka.TestKafka.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.waymark.kafka.internal.RecordConverter;
import dev.waymark.messaging.Attributes;
import dev.waymark.messaging.Envelope;
import dev.waymark.messaging.MessageKey;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.Test;

/** Checklist 11: a Kafka record as an envelope (broker-free, real ConsumerRecord values). */
class RecordConverterTest {

    private static ConsumerRecord<byte[], byte[]> record(String topic, int partition, long offset, long timestamp,
            TimestampType type, byte[] key, byte[] value, RecordHeaders headers) {
        return new ConsumerRecord<>(topic, partition, offset, timestamp, type, -1, -1, key, value, headers,
                Optional.empty());
    }

    private static ConsumerRecord<byte[], byte[]> simple(RecordHeaders headers) {
        return record("orders", 2, 42, 1_700_000_000_000L, TimestampType.CREATE_TIME, bytes("key-1"), bytes("body"),
                headers);
    }

    private static Envelope convert(ConsumerRecord<byte[], byte[]> record) {
        return RecordConverter.toEnvelope(record, 0, KafkaOrdering.KEY);
    }

    @Test
    void message_id_is_topic_partition_offset_and_parses_back() {
        Envelope e = convert(simple(new RecordHeaders()));
        assertThat(e.messageId()).isEqualTo("orders-2-42");
        assertThat(KafkaCoordinates.of(e)).isEqualTo(new KafkaCoordinates("orders", 2, 42));
    }

    @Test
    void coordinates_parse_topics_that_contain_dashes() {
        Envelope e = convert(record("my-dashed-topic", 5, 99, 0, TimestampType.CREATE_TIME, null, bytes("x"),
                new RecordHeaders()));
        assertThat(e.messageId()).isEqualTo("my-dashed-topic-5-99");
        assertThat(KafkaCoordinates.of(e)).isEqualTo(new KafkaCoordinates("my-dashed-topic", 5, 99));
    }

    @Test
    void coordinates_parse_from_the_message_id_a_handler_sees() {
        assertThat(KafkaCoordinates.of("my-dashed-topic-5-99"))
                .isEqualTo(new KafkaCoordinates("my-dashed-topic", 5, 99));
        assertThat(KafkaCoordinates.of("t-0-9000000000")).isEqualTo(new KafkaCoordinates("t", 0, 9_000_000_000L));
        KafkaCoordinates c = new KafkaCoordinates("orders", 3, 7);
        assertThat(KafkaCoordinates.of(c.messageId())).isEqualTo(c);
    }

    @Test
    void an_id_that_is_not_topic_partition_offset_is_refused_naming_it() {
        for (String bad : List.of("orders", "orders-1", "-1-2", "orders--2", "orders-1-", "orders-x-1", "orders-1-y",
                "orders-+1-2", "orders-1-+2", "orders-99999999999-1", "orders-1-99999999999999999999",
                "01a22f8c-50b4-74ad-8c43-d916803cb0f7")) {
            assertThatThrownBy(() -> KafkaCoordinates.of(bad)).as(bad).isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("not a Kafka message id (topic-partition-offset): " + bad);
        }
        assertThatThrownBy(() -> KafkaCoordinates.of((String) null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("not a Kafka message id (topic-partition-offset): null");
    }

    @Test
    void cursor_is_the_offset() {
        Envelope e = convert(record("t", 0, 99, 0, TimestampType.CREATE_TIME, null, bytes("x"), new RecordHeaders()));
        assertThat(e.cursor()).isEqualTo("99");
    }

    @Test
    void key_and_ordering_key_are_the_record_key() {
        Envelope e = convert(simple(new RecordHeaders()));
        assertThat(e.key()).isEqualTo(MessageKey.ofUtf8("key-1"));
        assertThat(e.key().asUtf8()).isEqualTo("key-1");
        assertThat(e.orderingKey()).isEqualTo(MessageKey.ofUtf8("key-1"));
    }

    @Test
    void a_key_that_is_not_utf8_arrives_byte_for_byte_and_an_empty_key_is_not_no_key() {
        byte[] uuid = {(byte) 0x9f, 0x00, (byte) 0xc3, 0x28, (byte) 0xff, (byte) 0xfe, 0x01, (byte) 0x80};
        Envelope binary = convert(
                record("t", 0, 1, 0, TimestampType.CREATE_TIME, uuid, bytes("x"), new RecordHeaders()));
        assertThat(binary.key().bytes()).containsExactly(uuid);
        assertThat(binary.orderingKey()).isEqualTo(MessageKey.of(uuid));
        Envelope empty = convert(record("t", 0, 1, 0, TimestampType.CREATE_TIME, new byte[0], bytes("x"),
                new RecordHeaders()));
        assertThat(empty.key()).isNotNull().isEqualTo(MessageKey.of(new byte[0]));
        assertThat(empty.orderingKey()).isEqualTo(MessageKey.of(new byte[0]));
    }

    @Test
    void partition_ordering_uses_topic_and_partition_as_ordering_key() {
        Envelope e = RecordConverter.toEnvelope(simple(new RecordHeaders()), 0, KafkaOrdering.PARTITION);
        assertThat(e.orderingKey()).isEqualTo(MessageKey.ofUtf8("orders-2"));
        assertThat(e.key()).isEqualTo(MessageKey.ofUtf8("key-1"));
    }

    @Test
    void a_record_without_key_has_no_key_and_no_ordering_key() {
        Envelope e = convert(record("t", 0, 1, 0, TimestampType.CREATE_TIME, null, bytes("x"), new RecordHeaders()));
        assertThat(e.key()).isNull();
        assertThat(e.orderingKey()).isNull();
    }

    @Test
    void event_time_from_create_time() {
        Envelope e = convert(simple(new RecordHeaders()));
        assertThat(e.eventTime()).isEqualTo(Instant.ofEpochMilli(1_700_000_000_000L));
    }

    @Test
    void event_time_from_log_append_time() {
        Envelope e = convert(record("t", 0, 1, 1_700_000_000_123L, TimestampType.LOG_APPEND_TIME, null, bytes("x"),
                new RecordHeaders()));
        assertThat(e.eventTime()).isEqualTo(Instant.ofEpochMilli(1_700_000_000_123L));
    }

    @Test
    void no_timestamp_means_no_event_time() {
        Envelope e = convert(record("t", 0, 1, ConsumerRecord.NO_TIMESTAMP, TimestampType.NO_TIMESTAMP_TYPE, null,
                bytes("x"), new RecordHeaders()));
        assertThat(e.eventTime()).isNull();
    }

    @Test
    void zero_millis_is_the_epoch() {
        Envelope e = convert(record("t", 0, 1, 0, TimestampType.CREATE_TIME, null, bytes("x"), new RecordHeaders()));
        assertThat(e.eventTime()).isEqualTo(Instant.EPOCH);
    }

    @Test
    void payload_is_the_value() {
        assertThat(text(convert(simple(new RecordHeaders())).payload())).isEqualTo("body");
    }

    @Test
    void a_null_value_is_a_tombstone_with_an_empty_payload_and_an_empty_value_is_not() {
        Envelope e = convert(record("t", 0, 1, 0, TimestampType.CREATE_TIME, bytes("k"), null, new RecordHeaders()));
        assertThat(e.payload()).isEmpty();
        assertThat(e.tombstone()).isTrue();
        Envelope empty = convert(record("t", 0, 1, 0, TimestampType.CREATE_TIME, bytes("k"), new byte[0],
                new RecordHeaders()));
        assertThat(empty.payload()).isEmpty();
        assertThat(empty.tombstone()).isFalse();
    }

    @Test
    void headers_are_kept_verbatim_in_order_with_duplicates() {
        RecordHeaders headers = new RecordHeaders();
        headers.add("schema-id", bytes("7"));
        headers.add("x-tag", bytes("a"));
        headers.add("x-tag", bytes("b"));
        Envelope e = convert(simple(headers));
        assertThat(e.headers()).extracting(Envelope.Header::name).containsExactly("schema-id", "x-tag", "x-tag");
        assertThat(e.headers()).extracting(h -> text(h.value())).containsExactly("7", "a", "b");
    }

    @Test
    void no_headers_is_an_empty_list() {
        assertThat(convert(simple(new RecordHeaders())).headers()).isEmpty();
    }

    @Test
    void a_header_with_a_null_value_is_kept() {
        RecordHeaders headers = new RecordHeaders();
        headers.add("empty", null);
        Envelope e = convert(simple(headers));
        assertThat(e.headers()).hasSize(1);
        assertThat(e.headers().get(0).value()).isNull();
    }

    @Test
    void trace_context_from_traceparent_only() {
        RecordHeaders headers = new RecordHeaders();
        headers.add("traceparent", bytes("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"));
        Envelope e = convert(simple(headers));
        assertThat(e.traceparent()).isEqualTo("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
        assertThat(e.tracestate()).isNull();
    }

    @Test
    void trace_context_from_traceparent_and_tracestate() {
        RecordHeaders headers = new RecordHeaders();
        headers.add("tracestate", bytes("vendor=x"));
        headers.add("traceparent", bytes("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"));
        Envelope e = convert(simple(headers));
        assertThat(e.traceparent()).startsWith("00-0af7");
        assertThat(e.tracestate()).isEqualTo("vendor=x");
    }

    @Test
    void the_first_traceparent_wins_and_lookup_is_case_sensitive() {
        RecordHeaders headers = new RecordHeaders();
        headers.add("TraceParent", bytes("ignored"));
        headers.add("traceparent", bytes("first"));
        headers.add("traceparent", bytes("second"));
        assertThat(convert(simple(headers)).traceparent()).isEqualTo("first");
    }

    @Test
    void no_traceparent_means_no_trace_context_even_with_tracestate() {
        RecordHeaders headers = new RecordHeaders();
        headers.add("tracestate", bytes("vendor=x"));
        Envelope e = convert(simple(headers));
        assertThat(e.traceparent()).isNull();
        assertThat(e.tracestate()).isNull();
    }

    @Test
    void an_empty_traceparent_means_no_trace_context() {
        RecordHeaders headers = new RecordHeaders();
        headers.add("traceparent", bytes(""));
        assertThat(convert(simple(headers)).traceparent()).isNull();
    }

    @Test
    void attempt_is_passed_through() {
        assertThat(RecordConverter.toEnvelope(simple(new RecordHeaders()), 3, KafkaOrdering.KEY).attempt())
                .isEqualTo(3);
    }

    @Test
    void tracing_attributes_name_kafka_and_the_partition_and_offset_as_integers() {
        Envelope e = convert(simple(new RecordHeaders()));
        assertThat(e.attributes().values()).containsOnly(
                Map.entry("messaging.system", new Attributes.Value.Text("kafka")),
                Map.entry("messaging.kafka.destination.partition", new Attributes.Value.Int64(2)),
                Map.entry("messaging.kafka.message.offset", new Attributes.Value.Int64(42)));
    }

    @Test
    void tracing_attributes_follow_each_record_whatever_its_topic_and_ordering() {
        Envelope e = RecordConverter.toEnvelope(record("my-dashed-topic", 11, 9_000_000_000L, 0,
                TimestampType.CREATE_TIME, null, null, new RecordHeaders()), 2, KafkaOrdering.PARTITION);
        assertThat(e.attributes().values())
                .containsEntry("messaging.kafka.destination.partition", new Attributes.Value.Int64(11))
                .containsEntry("messaging.kafka.message.offset", new Attributes.Value.Int64(9_000_000_000L));
    }
}
