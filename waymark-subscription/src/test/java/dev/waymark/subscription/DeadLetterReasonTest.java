package dev.waymark.subscription;

import static org.assertj.core.api.Assertions.assertThat;

import dev.waymark.core.DeadLetterReason;
import dev.waymark.subscription.internal.ReasonJson;
import org.junit.jupiter.api.Test;

/** The stored JSON form of the one dead-letter reason type, and an interface without shared mutable state. */
class DeadLetterReasonTest {

    @Test
    void each_reason_has_its_json_form() {
        assertThat(ReasonJson.of(DeadLetterReason.poison("x")))
                .isEqualTo("{\"kind\":\"poison\",\"summary\":\"poison: x\",\"detail\":\"x\"}");
        assertThat(ReasonJson.of(DeadLetterReason.invalid("y")))
                .isEqualTo("{\"kind\":\"invalid\",\"summary\":\"invalid payload: y\",\"detail\":\"y\"}");
        assertThat(ReasonJson.of(DeadLetterReason.maxAttempts(3)))
                .isEqualTo(
                        "{\"kind\":\"max_attempts\",\"summary\":\"max retry attempts exceeded (3)\",\"attempts\":3}");
        assertThat(ReasonJson.of(DeadLetterReason.other("s", "{\"code\":7}")))
                .isEqualTo("{\"kind\":\"other\",\"summary\":\"s\",\"detail\":{\"code\":7}}");
        assertThat(ReasonJson.of(DeadLetterReason.other("s", "not json")))
                .isEqualTo("{\"kind\":\"other\",\"summary\":\"s\",\"detail\":\"not json\"}");
    }

    @Test
    void the_interface_exposes_no_field() {
        // before: a public ObjectMapper constant any caller could reconfigure for every reason's JSON
        assertThat(DeadLetterReason.class.getFields()).isEmpty();
    }
}
