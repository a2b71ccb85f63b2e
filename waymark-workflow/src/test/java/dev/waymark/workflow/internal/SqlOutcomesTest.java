package dev.waymark.workflow.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.waymark.store.StoreException;
import org.junit.jupiter.api.Test;

/** The SQL functions' outcome codes map to enums, and an unknown code fails loudly. */
class SqlOutcomesTest {

    @Test
    void each_code_the_sql_functions_return_maps_to_its_constant() {
        assertThat(SqlOutcomes.Append.fromSql("appended")).isEqualTo(SqlOutcomes.Append.APPENDED);
        assertThat(SqlOutcomes.Append.fromSql("present")).isEqualTo(SqlOutcomes.Append.PRESENT);
        assertThat(SqlOutcomes.Append.fromSql("refused")).isEqualTo(SqlOutcomes.Append.REFUSED);
        assertThat(SqlOutcomes.Append.fromSql("lease_lost")).isEqualTo(SqlOutcomes.Append.LEASE_LOST);
        assertThat(SqlOutcomes.Append.fromSql("stale")).isEqualTo(SqlOutcomes.Append.STALE);
        assertThat(SqlOutcomes.Append.fromSql("missing")).isEqualTo(SqlOutcomes.Append.MISSING);
        assertThat(SqlOutcomes.Append.fromSql("busy")).isEqualTo(SqlOutcomes.Append.BUSY);
        assertThat(SqlOutcomes.Start.fromSql("created")).isEqualTo(SqlOutcomes.Start.CREATED);
        assertThat(SqlOutcomes.Start.fromSql("exists")).isEqualTo(SqlOutcomes.Start.EXISTS);
        assertThat(SqlOutcomes.Start.fromSql("parent_ended")).isEqualTo(SqlOutcomes.Start.PARENT_ENDED);
        assertThat(SqlOutcomes.Suspend.fromSql("suspended")).isEqualTo(SqlOutcomes.Suspend.SUSPENDED);
        assertThat(SqlOutcomes.Suspend.fromSql("resolved")).isEqualTo(SqlOutcomes.Suspend.RESOLVED);
        assertThat(SqlOutcomes.Suspend.fromSql("cancelled")).isEqualTo(SqlOutcomes.Suspend.CANCELLED);
        assertThat(SqlOutcomes.Rotate.fromSql("rotated")).isEqualTo(SqlOutcomes.Rotate.ROTATED);
        assertThat(SqlOutcomes.Rotate.fromSql("failed")).isEqualTo(SqlOutcomes.Rotate.FAILED);
        assertThat(SqlOutcomes.Settle.fromSql("settled")).isEqualTo(SqlOutcomes.Settle.SETTLED);
        assertThat(SqlOutcomes.Settle.fromSql("unknown")).isEqualTo(SqlOutcomes.Settle.UNKNOWN);
        assertThat(SqlOutcomes.Settle.fromSql("already_abandoned")).isEqualTo(SqlOutcomes.Settle.ALREADY_ABANDONED);
        assertThat(SqlOutcomes.AwakeableStatus.fromSql("pending")).isEqualTo(SqlOutcomes.AwakeableStatus.PENDING);
        assertThat(SqlOutcomes.AwakeableStatus.fromSql("abandoned")).isEqualTo(SqlOutcomes.AwakeableStatus.ABANDONED);
        assertThat(SqlOutcomes.Collect.fromSql("deleted")).isEqualTo(SqlOutcomes.Collect.DELETED);
        assertThat(SqlOutcomes.Collect.fromSql("kept")).isEqualTo(SqlOutcomes.Collect.KEPT);
    }

    @Test
    void every_constant_round_trips_through_its_lower_case_code() {
        for (Class<? extends Enum<?>> type : java.util.List.<Class<? extends Enum<?>>>of(SqlOutcomes.Append.class,
                SqlOutcomes.Start.class, SqlOutcomes.Suspend.class, SqlOutcomes.Rotate.class, SqlOutcomes.Settle.class,
                SqlOutcomes.AwakeableStatus.class, SqlOutcomes.Collect.class)) {
            for (Enum<?> constant : type.getEnumConstants()) {
                assertThat(parse(type, constant.name().toLowerCase(java.util.Locale.ROOT))).isSameAs(constant);
            }
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static Enum<?> parse(Class type, String code) {
        return SqlOutcomes.parse(type, "f", code);
    }

    @Test
    void an_unknown_code_fails_loudly_naming_the_function_and_the_known_codes() {
        // before: an unknown code fell through a `default ->` branch (an unknown awakeable outcome, a
        // "cancelled" awakeable envelope) or threw a message without the known values
        assertThatThrownBy(() -> SqlOutcomes.Settle.fromSql("already_pending")).isInstanceOf(StoreException.class)
                .hasMessage("wf_settle_awakeable returned 'already_pending', which this version of Waymark does not"
                        + " know (expected one of [settled, unknown, already_completed, already_failed,"
                        + " already_cancelled, already_abandoned]); the schema and the code do not match");
        assertThatThrownBy(() -> SqlOutcomes.Append.fromSql(null)).isInstanceOf(StoreException.class)
                .hasMessageStartingWith("wf_append returned null");
        assertThatThrownBy(() -> SqlOutcomes.Collect.fromSql("DELETED")).as("codes are lower case")
                .isInstanceOf(StoreException.class);
    }
}
