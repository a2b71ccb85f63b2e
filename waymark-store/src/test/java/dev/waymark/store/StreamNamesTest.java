package dev.waymark.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.waymark.testkit.PostgresExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The category rule and the stream hash, identical in Java and SQL; the vectors are documented in the README. */
class StreamNamesTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = StoreFixture.migratedPostgres();

    static final List<String> VECTORS = List.of("a", "foobar", "order-42", "invoice-payment", "€uro-1",
            "日本-注文-7", "stream with spaces", "x".repeat(512), "order-1", "order-2", "order-3");

    @BeforeAll
    static void setUp() {}

    @Test
    void java_hash_is_fnv1a_32() {
        assertThat(StreamNames.hash("a")).isEqualTo(0xe40c292c);
        assertThat(StreamNames.hash("foobar")).isEqualTo(0xbf9cf968);
        assertThat(StreamNames.hash("order-42")).isEqualTo(1461995252);
        assertThat(StreamNames.hash("€uro-1")).isEqualTo(-1554957669);
    }

    @Test
    void sql_hash_equals_java_hash_on_the_vectors() throws SQLException {
        try (Connection c = POSTGRES.dataSource().getConnection();
                PreparedStatement p = c.prepareStatement("SELECT waymark.stream_hash(?)")) {
            for (String name : VECTORS) {
                p.setString(1, name);
                try (ResultSet rs = p.executeQuery()) {
                    rs.next();
                    assertThat(rs.getInt(1)).as(name).isEqualTo(StreamNames.hash(name));
                }
            }
        }
    }

    @Test
    void member_is_floor_mod_of_the_hash() {
        assertThat(StreamNames.member("order-42", 4)).isZero();
        assertThat(StreamNames.member("€uro-1", 4)).isEqualTo(Math.floorMod(-1554957669, 4)).isEqualTo(3);
        for (String name : VECTORS) {
            assertThat(StreamNames.member(name, 1)).isZero();
            assertThat(StreamNames.member(name, 7)).isBetween(0, 6);
        }
    }

    @Test
    void category_is_the_part_before_the_first_dash() {
        assertThat(StreamNames.category("orders-1")).isEqualTo("orders");
        assertThat(StreamNames.category("orders-a-b-c")).isEqualTo("orders");
        assertThat(StreamNames.category("singleton")).isEqualTo("singleton");
        assertThat(StreamNames.category("invoice-payment")).isEqualTo("invoice");
        assertThat(StreamNames.category("-lead")).isEmpty();
    }
}
