package dev.waymark.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.waymark.testkit.KafkaBroker;
import dev.waymark.testkit.PostgresExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The demo as a smoke test: the whole scenario (three worker JVMs, one killed, a workflow per
 * order) checks its own invariants; a second run on the same database works too.
 */
class DemoTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = new PostgresExtension();

    @Test
    void the_demo_holds_its_invariants_and_can_run_twice_on_one_database() throws Exception {
        String kafka = KafkaBroker.get().bootstrapServers();
        assertThat(Demo.run(POSTGRES.jdbcUrl(), kafka)).isZero();
        assertThat(Demo.run(POSTGRES.jdbcUrl(), kafka)).isZero();
    }
}
