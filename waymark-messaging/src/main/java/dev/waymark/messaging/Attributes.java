package dev.waymark.messaging;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Typed attributes a source attaches to a message for tracing, such as the Kafka adapter's
 * {@code messaging.system=kafka} and the record's partition and offset. {@code MessageTracing} puts
 * them on the message's span after its own, so on a name both set the source's value wins.
 * Immutable; each name appears once, non-blank; the map's iteration order is unspecified. Built
 * from an immutable map ({@code Map.of}), it holds that map without copying it, so a source can
 * attach attributes to every message for a few small objects.
 *
 * @param values the attributes by name
 */
public record Attributes(Map<String, Attributes.Value> values) {

    private static final Attributes EMPTY = new Attributes(Map.of());

    /**
     * Validates and copies.
     *
     * @throws IllegalArgumentException if the map, a name or a value is null, or a name is blank
     */
    public Attributes {
        if (values == null) {
            throw new IllegalArgumentException("attributes must not be null (Attributes.empty() for none)");
        }
        values.forEach((name, value) -> {
            requireName(name);
            if (value == null) {
                throw new IllegalArgumentException("attribute '" + name + "' needs a value, got null");
            }
        });
        values = Map.copyOf(values); // the same map when it is already an immutable one
    }

    /** No attributes. */
    public static Attributes empty() {
        return EMPTY;
    }

    /** A builder with no attributes yet. */
    public static Builder builder() {
        return new Builder();
    }

    private static void requireName(String name) {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("an attribute name must not be null or blank, got "
                    + (name == null ? "null" : "'" + name + "'"));
        }
    }

    /** An attribute value: text, a 64-bit integer, a double or a boolean (the OpenTelemetry scalar types). */
    public sealed interface Value {

        /** @param value the text, not null */
        record Text(String value) implements Value {
            /**
             * Validates.
             *
             * @throws IllegalArgumentException if the text is null
             */
            public Text {
                if (value == null) {
                    throw new IllegalArgumentException("a text attribute value must not be null");
                }
            }
        }

        /** @param value the integer */
        record Int64(long value) implements Value {}

        /** @param value the number */
        record Float64(double value) implements Value {}

        /** @param value the flag */
        record Bool(boolean value) implements Value {}
    }

    /** Builds {@link Attributes}; each name may be added once. */
    public static final class Builder {
        private final Map<String, Value> values = new LinkedHashMap<>();

        private Builder() {}

        /**
         * Adds a text attribute.
         *
         * @throws IllegalArgumentException if the name is blank or already added, or the value is null
         */
        public Builder put(String name, String value) {
            if (value == null) {
                throw new IllegalArgumentException("attribute '" + name + "' needs a value, got null");
            }
            return add(name, new Value.Text(value));
        }

        /**
         * Adds an integer attribute.
         *
         * @throws IllegalArgumentException if the name is blank or already added
         */
        public Builder put(String name, long value) {
            return add(name, new Value.Int64(value));
        }

        /**
         * Adds a floating-point attribute.
         *
         * @throws IllegalArgumentException if the name is blank or already added
         */
        public Builder put(String name, double value) {
            return add(name, new Value.Float64(value));
        }

        /**
         * Adds a boolean attribute.
         *
         * @throws IllegalArgumentException if the name is blank or already added
         */
        public Builder put(String name, boolean value) {
            return add(name, new Value.Bool(value));
        }

        private Builder add(String name, Value value) {
            requireName(name);
            if (values.putIfAbsent(name, value) != null) {
                throw new IllegalArgumentException("attribute '" + name + "' is given twice");
            }
            return this;
        }

        /** The attributes added so far. */
        public Attributes build() {
            return values.isEmpty() ? EMPTY : new Attributes(values);
        }
    }
}
