package dev.waymark.messaging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Keys as bytes: equality, text views, null against empty, and ordering by bytes. */
class MessageKeyTest {

    private static final byte[] FF = {(byte) 0xFF};
    private static final byte[] FE = {(byte) 0xFE};

    @Test
    void keys_are_equal_exactly_when_their_bytes_are_even_when_they_are_not_utf8() {
        assertThat(MessageKey.of(FF)).isEqualTo(MessageKey.of(new byte[]{(byte) 0xFF}))
                .hasSameHashCodeAs(MessageKey.of(new byte[]{(byte) 0xFF}))
                .isNotEqualTo(MessageKey.of(FE));
        // both decode to U+FFFD: the lossy String key this type replaces made them one key
        assertThat(new String(FF, StandardCharsets.UTF_8)).isEqualTo(new String(FE, StandardCharsets.UTF_8));
        assertThat(MessageKey.ofUtf8("order-7")).isEqualTo(MessageKey.of("order-7".getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void the_bytes_are_copied_in_and_out() {
        byte[] raw = {1, 2, 3};
        MessageKey key = MessageKey.of(raw);
        raw[0] = 9;
        key.bytes()[1] = 9;
        assertThat(key.bytes()).containsExactly(1, 2, 3);
        assertThat(key.asReadOnlyByteBuffer().isReadOnly()).isTrue();
        assertThat(key.asReadOnlyByteBuffer().remaining()).isEqualTo(3);
    }

    @Test
    void text_is_given_only_for_utf8_keys_and_never_with_replacement_characters() {
        assertThat(MessageKey.ofUtf8("zürich-€").asUtf8()).isEqualTo("zürich-€");
        assertThat(MessageKey.ofUtf8("zürich-€").isUtf8()).isTrue();
        MessageKey binary = MessageKey.of(new byte[]{0x01, (byte) 0xC3, 0x28});
        assertThat(binary.isUtf8()).isFalse();
        assertThatThrownBy(binary::asUtf8).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("0x01c328").hasMessageContaining("bytes()");
        assertThat(binary).hasToString("0x01c328");
        assertThat(MessageKey.ofUtf8("a")).hasToString("a");
    }

    @Test
    void an_empty_key_is_a_key_and_no_key_is_null() {
        MessageKey empty = MessageKey.of(new byte[0]);
        assertThat(empty.isEmpty()).isTrue();
        assertThat(empty.size()).isZero();
        assertThat(empty).isEqualTo(MessageKey.ofUtf8("")).isNotNull();
        assertThat(Envelope.builder("m", new byte[0]).key((byte[]) null).build().key()).isNull();
        assertThat(Envelope.builder("m", new byte[0]).key(new byte[0]).build().key()).isEqualTo(empty);
        assertThatThrownBy(() -> MessageKey.of(null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("null MessageKey");
        assertThatThrownBy(() -> MessageKey.ofUtf8(null)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void a_tombstone_has_an_empty_payload_and_differs_from_an_empty_payload() {
        Envelope tombstone = Envelope.tombstoneBuilder("t").build();
        Envelope empty = Envelope.builder("e", new byte[0]).build();
        assertThat(tombstone.tombstone()).isTrue();
        assertThat(tombstone.payload()).isEmpty();
        assertThat(empty.tombstone()).isFalse();
        assertThat(new Message(tombstone, java.util.Optional.empty()).tombstone()).isTrue();
        assertThatThrownBy(() -> new Envelope("x", null, null, List.of(), new byte[]{1}, true, null,
                java.time.Instant.now(), 0, null, null, null, Attributes.empty()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("tombstone");
        assertThatThrownBy(() -> Envelope.builder("x", null).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("tombstone");
    }

    @Test
    void ordered_by_key_keeps_two_non_utf8_keys_apart_and_each_in_order() throws Exception {
        InMemorySource source = new InMemorySource("bin");
        for (int i = 0; i < 20; i++) {
            byte[] key = i % 2 == 0 ? FF : FE;
            source.send(Envelope.builder("m" + i, Integer.toString(i).getBytes(StandardCharsets.UTF_8))
                    .key(key).orderingKey(MessageKey.of(key)).build());
        }
        CountDownLatch feHandled = new CountDownLatch(1);
        Map<MessageKey, List<Integer>> perKey = new ConcurrentHashMap<>();
        List<Boolean> parallel = new CopyOnWriteArrayList<>();
        ProcessingApp app = ProcessingApp.builder().processor("p", source, Concurrency.orderedByKey(4), m -> {
            int n = Integer.parseInt(new String(m.payload(), StandardCharsets.UTF_8));
            perKey.computeIfAbsent(m.key(), k -> new CopyOnWriteArrayList<>()).add(n);
            if (n == 0) {
                parallel.add(feHandled.await(5, TimeUnit.SECONDS)); // waits for the other key: not one chain
            } else if (n % 2 == 1) {
                feHandled.countDown();
            }
            return AckDecision.ok();
        }).build().start();
        await().atMost(Duration.ofSeconds(10)).until(() -> source.decisions().size() == 20);
        app.stop();
        assertThat(parallel).containsExactly(true);
        assertThat(perKey.get(MessageKey.of(FF))).containsExactly(0, 2, 4, 6, 8, 10, 12, 14, 16, 18);
        assertThat(perKey.get(MessageKey.of(FE))).containsExactly(1, 3, 5, 7, 9, 11, 13, 15, 17, 19);
    }
}
