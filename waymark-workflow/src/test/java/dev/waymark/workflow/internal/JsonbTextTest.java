package dev.waymark.workflow.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.waymark.testkit.PostgresExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link JsonbText} writes what PostgreSQL's {@code jsonb} gives back, checked against the server. */
class JsonbTextTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = new PostgresExtension();

    private static final List<String> SAMPLES = List.of(
            "0", "-0", "42", "-17", "12345678901234567890", "true", "null", "\"plain\"",
            "1E+7", "1.0E7", "2.50", "-0.0", "1e-7", "100e-2", "1.500E2", "3.14159",
            "\"tab\\tquote\\\" é \\u00e9 \\ud83d\\ude00\"",
            "{\"banana\":1,\"kiwi\":2,\"fig\":3}",
            "{\"b\":1,\"a\":2,\"aa\":{\"é\":1,\"z\":2,\"e\":3},\"a\":4}",
            "[1, 2.0, {\"y\":[],\"x\":{}}, \"s\", [null, false]]",
            "{\"\":0,\"Z\":1,\"a\":2,\"~\":3,\"é\":4}");

    @Test
    void writes_every_sample_as_jsonb_gives_it_back() throws Exception {
        try (Connection c = POSTGRES.dataSource().getConnection();
                PreparedStatement p = c.prepareStatement("SELECT ?::jsonb::text")) {
            for (String sample : SAMPLES) {
                p.setString(1, sample);
                try (ResultSet r = p.executeQuery()) {
                    r.next();
                    assertThat(JsonbText.of(sample, "sample")).as(sample).isEqualTo(withoutSpaces(r.getString(1)));
                }
            }
        }
    }

    /** jsonb's text without the blanks it puts after ':' and ',' (outside strings). */
    private static String withoutSpaces(String jsonb) {
        StringBuilder out = new StringBuilder();
        boolean inString = false;
        for (int i = 0; i < jsonb.length(); i++) {
            char ch = jsonb.charAt(i);
            if (inString) {
                out.append(ch);
                if (ch == '\\') {
                    out.append(jsonb.charAt(++i));
                } else if (ch == '"') {
                    inString = false;
                }
            } else if (ch != ' ') {
                out.append(ch);
                inString = ch == '"';
            }
        }
        return out.toString();
    }
}
