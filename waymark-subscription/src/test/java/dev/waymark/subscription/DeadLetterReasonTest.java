package dev.waymark.subscription;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The stored JSON form of dead-letter reasons, and an interface without shared mutable state. */
class DeadLetterReasonTest {

    @Test
    void each_reason_has_its_json_form() {
        assertThat(DeadLetterReason.poison("x").json())
                .isEqualTo("{\"kind\":\"poison\",\"summary\":\"poison: x\",\"detail\":\"x\"}");
        assertThat(DeadLetterReason.invalid("y").json())
                .isEqualTo("{\"kind\":\"invalid\",\"summary\":\"invalid payload: y\",\"detail\":\"y\"}");
        assertThat(DeadLetterReason.maxAttempts(3).json())
                .isEqualTo("{\"kind\":\"max_attempts\",\"summary\":\"max retry attempts exceeded (3)\",\"attempts\":3}");
        // Other's json() is its record component, the details as given (see DeadLetterApiTest for its stored form)
        assertThat(DeadLetterReason.other("s", "{\"code\":7}").json()).isEqualTo("{\"code\":7}");
    }

    @Test
    void the_interface_exposes_no_field() {
        // before: a public ObjectMapper constant any caller could reconfigure for every reason's JSON
        assertThat(DeadLetterReason.class.getFields()).isEmpty();
    }
}
