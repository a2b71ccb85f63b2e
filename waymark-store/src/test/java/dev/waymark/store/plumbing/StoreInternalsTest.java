package dev.waymark.store.plumbing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.waymark.store.EventStore;
import dev.waymark.store.InvalidInputException;
import java.lang.reflect.Method;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/** The plumbing Waymark's modules share is reached through StoreInternals, not the user-facing EventStore. */
class StoreInternalsTest {

    @Test
    void the_user_facing_interface_no_longer_carries_the_plumbing() {
        // before: dataSource(), signalAppended(), broadcast(...) and onBroadcast(...) sat next to append and the reads
        assertThat(Arrays.stream(EventStore.class.getMethods()).map(Method::getName))
                .doesNotContain("dataSource", "signalAppended", "broadcast", "onBroadcast");
    }

    @Test
    void the_internals_of_a_built_store_hand_out_its_data_source() {
        PGSimpleDataSource dataSource = new PGSimpleDataSource();
        try (EventStore store = EventStore.builder(dataSource).notifications(false).build()) {
            assertThat(StoreInternals.of(store).dataSource()).isSameAs(dataSource);
        }
        assertThatThrownBy(() -> StoreInternals.of(null)).isInstanceOf(InvalidInputException.class)
                .hasMessage("not an event store made by EventStore.builder: null");
    }
}
