package dev.waymark.messaging;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * A message key as the broker or store holds it: an immutable sequence of bytes, compared byte by
 * byte. A Kafka record key arrives exactly as produced (UUID bytes, an Avro or schema-registry
 * encoding, text); an event-store key is the stream name in UTF-8. Two keys are equal exactly when
 * their bytes are, so keys that are not valid UTF-8 never collapse into one, and
 * {@link Concurrency#orderedByKey(int)} orders by these bytes.
 *
 * <p>No key and an empty key differ: an envelope without a key has a null {@link Envelope#key()},
 * an empty key is a {@code MessageKey} of {@link #size()} 0.
 */
public final class MessageKey {

    private static final HexFormat HEX = HexFormat.of();

    private final byte[] bytes;
    /** Arrays.hashCode of the bytes, computed once (0 until then, as String does). */
    private int hash;

    private MessageKey(byte[] bytes) {
        this.bytes = bytes;
    }

    /**
     * The key made of a copy of {@code bytes} (later changes to the array do not change it).
     *
     * @throws IllegalArgumentException if {@code bytes} is null (a message without a key has no
     *     {@code MessageKey}: pass null to the envelope instead)
     */
    public static MessageKey of(byte[] bytes) {
        if (bytes == null) {
            throw new IllegalArgumentException("key bytes must not be null (an absent key is a null MessageKey)");
        }
        return new MessageKey(bytes.clone());
    }

    /**
     * The key made of {@code text} encoded as UTF-8.
     *
     * @throws IllegalArgumentException if {@code text} is null
     */
    public static MessageKey ofUtf8(String text) {
        if (text == null) {
            throw new IllegalArgumentException("key text must not be null (an absent key is a null MessageKey)");
        }
        return new MessageKey(text.getBytes(StandardCharsets.UTF_8));
    }

    /** A copy of the key's bytes, exactly as received; an empty array for an empty key. */
    public byte[] bytes() {
        return bytes.clone();
    }

    /** The key's bytes as a read-only buffer, without a copy. */
    public ByteBuffer asReadOnlyByteBuffer() {
        return ByteBuffer.wrap(bytes).asReadOnlyBuffer();
    }

    /** How many bytes the key has. */
    public int size() {
        return bytes.length;
    }

    /** Whether the key has no bytes (an empty key, which is not the same as no key). */
    public boolean isEmpty() {
        return bytes.length == 0;
    }

    /** Whether the bytes are well-formed UTF-8, so {@link #asUtf8()} returns them as text without loss. */
    public boolean isUtf8() {
        return decode() != null;
    }

    /**
     * The key as text, for keys that are UTF-8 (stream names, string keys).
     *
     * @throws IllegalStateException if the bytes are not well-formed UTF-8 (the message names them in
     *     hexadecimal): read {@link #bytes()} instead; a key is never decoded with replacement
     *     characters, which would make distinct keys look equal
     */
    public String asUtf8() {
        String text = decode();
        if (text == null) {
            throw new IllegalStateException("key 0x" + HEX.formatHex(bytes) + " (" + bytes.length
                    + " bytes) is not UTF-8 text; read it with bytes()");
        }
        return text;
    }

    private String decode() {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    /** Equal to another {@code MessageKey} with the same bytes. */
    @Override
    public boolean equals(Object other) {
        return other == this || other instanceof MessageKey k && Arrays.equals(bytes, k.bytes);
    }

    @Override
    public int hashCode() {
        int h = hash;
        if (h == 0 && bytes.length > 0) {
            h = Arrays.hashCode(bytes);
            hash = h;
        }
        return h;
    }

    /**
     * For logs: the text of a UTF-8 key, else {@code 0x} and the bytes in hexadecimal. Two keys
     * may print alike (the text {@code 0x00} and the byte 0); compare keys with {@link #equals}.
     */
    @Override
    public String toString() {
        String text = decode();
        return text != null ? text : "0x" + HEX.formatHex(bytes);
    }
}
