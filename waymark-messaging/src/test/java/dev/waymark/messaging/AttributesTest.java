package dev.waymark.messaging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class AttributesTest {

    @Test
    void a_builder_keeps_each_typed_value() {
        Attributes a = Attributes.builder().put("b.text", "x").put("a.long", 3).put("c.double", 1.5)
                .put("d.bool", false).build();
        assertThat(a.values()).containsOnly(
                Map.entry("b.text", new Attributes.Value.Text("x")),
                Map.entry("a.long", new Attributes.Value.Int64(3)),
                Map.entry("c.double", new Attributes.Value.Float64(1.5)),
                Map.entry("d.bool", new Attributes.Value.Bool(false)));
        assertThat(Attributes.builder().build()).isSameAs(Attributes.empty());
        assertThat(Attributes.empty().values()).isEmpty();
    }

    @Test
    void blank_or_repeated_names_and_null_values_are_refused_naming_the_attribute() {
        assertThatThrownBy(() -> Attributes.builder().put(" ", "x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("an attribute name must not be null or blank, got ' '");
        assertThatThrownBy(() -> Attributes.builder().put(null, 1L))
                .hasMessage("an attribute name must not be null or blank, got null");
        assertThatThrownBy(() -> Attributes.builder().put("k", 1L).put("k", "again"))
                .hasMessage("attribute 'k' is given twice");
        assertThatThrownBy(() -> Attributes.builder().put("k", (String) null))
                .hasMessage("attribute 'k' needs a value, got null");
        Map<String, Attributes.Value> withNull = new HashMap<>();
        withNull.put("k", null);
        assertThatThrownBy(() -> new Attributes(withNull)).hasMessage("attribute 'k' needs a value, got null");
        assertThatThrownBy(() -> new Attributes(null)).hasMessageContaining("attributes must not be null");
        assertThatThrownBy(() -> new Attributes.Value.Text(null)).hasMessage("a text attribute value must not be null");
        assertThatThrownBy(() -> Envelope.builder("m", new byte[0]).attributes(null).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("attributes must not be null");
    }

    @Test
    void attributes_are_an_immutable_copy_and_an_envelope_has_none_unless_given() {
        Map<String, Attributes.Value> source = new HashMap<>(Map.of("k", new Attributes.Value.Int64(1)));
        Attributes a = new Attributes(source);
        source.put("later", new Attributes.Value.Bool(true));
        assertThat(a.values()).containsOnlyKeys("k");
        assertThatThrownBy(() -> a.values().put("x", new Attributes.Value.Bool(true)))
                .isInstanceOf(UnsupportedOperationException.class);
        assertThat(Envelope.builder("m", "{}".getBytes(StandardCharsets.UTF_8)).build().attributes())
                .isEqualTo(Attributes.empty());
    }
}
