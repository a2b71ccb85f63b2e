package dev.waymark.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.waymark.core.RetryPolicy;
import dev.waymark.messaging.MessagingConfigException;
import java.time.Duration;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The builder refuses bad values, naming the option, and fills every default. */
class KafkaSourceConfigTest {

    private static KafkaSourceConfigBuilder valid() {
        return KafkaSourceConfig.builder("localhost:9092", "g").topics("orders");
    }

    @Test
    void defaults_are_the_documented_constants() {
        KafkaSourceConfig c = valid().build();
        assertThat(c.name()).isEqualTo("kafka:orders");
        assertThat(c.polling().pollTimeout()).isEqualTo(KafkaSourceConfig.DEFAULT_POLL_TIMEOUT);
        assertThat(c.polling().maxPollRecords()).isEqualTo(500);
        assertThat(c.polling().bufferSize()).isEqualTo(2_000);
        assertThat(c.polling().retryHoldBytes()).isEqualTo(KafkaSourceConfig.DEFAULT_RETRY_HOLD_BYTES)
                .isEqualTo(32L << 20);
        assertThat(c.commits().interval()).isEqualTo(Duration.ofSeconds(1));
        assertThat(c.commits().drainTimeout()).isEqualTo(Duration.ofSeconds(30));
        assertThat(c.brokerRetry().attempts()).isEqualTo(5);
        assertThat(c.brokerRetry().retry()).isEqualTo(KafkaSourceConfig.DEFAULT_BROKER_RETRY)
                .isEqualTo(new RetryPolicy(5, Duration.ofMillis(200), 2.0, Duration.ofSeconds(5), 0.5));
        assertThat(c.brokerRetry().timeout()).isEqualTo(Duration.ofSeconds(10));
        assertThat(c.ordering()).isEqualTo(KafkaOrdering.KEY);
        assertThat(c.leaveGroupOnClose()).isTrue();
        assertThat(((DeadLetterPolicy.Named) c.deadLetters()).topicFor("orders")).isEqualTo("orders.DLT");
        assertThat(c.missingDeadLetterTopic()).isEqualTo(MissingDeadLetterTopic.FAIL)
                .isEqualTo(KafkaSourceConfig.DEFAULT_MISSING_DEAD_LETTER_TOPIC);
        assertThat(c.describe()).contains("group=g", "topics=[orders]", "deadLetters=topic",
                "brokerRetry=RetryPolicy[maxAttempts=5, initialDelay=200ms, multiplier=2.0, maxDelay=5000ms, jitter=0.5]",
                "missingDeadLetterTopic=FAIL", "leaveGroupOnClose=true");
        assertThat(valid().missingDeadLetterTopic(MissingDeadLetterTopic.CREATE).build().describe())
                .contains("missingDeadLetterTopic=CREATE");
        assertThat(valid().leaveGroupOnClose(false).build().leaveGroupOnClose()).isFalse();
    }

    @Test
    void the_buffer_grows_with_max_poll_records() {
        assertThat(valid().maxPollRecords(1_000).build().polling().bufferSize()).isEqualTo(4_000);
    }

    @Test
    void blank_bootstrap_servers_and_group_are_refused() {
        assertThatThrownBy(() -> KafkaSourceConfig.builder(" ", "g").topics("t").build())
                .isInstanceOf(MessagingConfigException.class).hasMessageContaining("bootstrapServers");
        assertThatThrownBy(() -> KafkaSourceConfig.builder("h:1", null).topics("t").build())
                .isInstanceOf(MessagingConfigException.class).hasMessageContaining("groupId");
    }

    @Test
    void exactly_one_of_topics_and_pattern() {
        assertThatThrownBy(() -> KafkaSourceConfig.builder("h:1", "g").build())
                .isInstanceOf(MessagingConfigException.class).hasMessageContaining("topics");
        assertThatThrownBy(() -> valid().topicPattern(Pattern.compile("o.*")).build())
                .isInstanceOf(MessagingConfigException.class).hasMessageContaining("topicPattern");
        assertThat(KafkaSourceConfig.builder("h:1", "g").topicPattern(Pattern.compile("o.*")).build().name())
                .isEqualTo("kafka:o.*");
    }

    @Test
    void out_of_range_values_name_the_option() {
        assertThatThrownBy(() -> valid().pollTimeout(Duration.ZERO).build()).hasMessageContaining("pollTimeout");
        assertThatThrownBy(() -> valid().maxPollRecords(0).build()).hasMessageContaining("maxPollRecords");
        assertThatThrownBy(() -> valid().bufferSize(10).build()).hasMessageContaining("bufferSize");
        assertThatThrownBy(() -> valid().retryHoldBytes(-1).build()).isInstanceOf(MessagingConfigException.class)
                .hasMessageContaining("retryHoldBytes").hasMessageContaining("-1");
        assertThatThrownBy(() -> valid().retryHoldBytes(KafkaSourceConfig.MAX_RETRY_HOLD_BYTES + 1).build())
                .hasMessageContaining("retryHoldBytes");
        assertThat(valid().retryHoldBytes(0).build().polling().retryHoldBytes()).isZero();
        assertThatThrownBy(() -> valid().commitInterval(Duration.ofSeconds(-1)).build())
                .hasMessageContaining("commitInterval");
        assertThatThrownBy(() -> valid().drainTimeout(null).build()).hasMessageContaining("drainTimeout");
        assertThatThrownBy(() -> valid().brokerRetry(RetryPolicy.fixed(101, Duration.ZERO)).build())
                .isInstanceOf(MessagingConfigException.class)
                .hasMessageContaining("brokerRetry must allow 1 to 100 attempts");
        assertThatThrownBy(() -> valid().brokerRetry(null).build()).hasMessageContaining("brokerRetry");
        assertThatThrownBy(() -> valid().brokerRetry(RetryPolicy.fixed(3, Duration.ofMinutes(2))).build())
                .hasMessageContaining("brokerRetry maxDelay");
        assertThatThrownBy(() -> valid().brokerOperationTimeout(Duration.ofMillis(5)).build())
                .hasMessageContaining("brokerOperationTimeout").hasMessageContaining("PT0.005S");
    }

    @Test
    void properties_the_source_owns_are_refused() {
        assertThatThrownBy(() -> valid().consumerProperty("enable.auto.commit", "true").build())
                .isInstanceOf(MessagingConfigException.class).hasMessageContaining("enable.auto.commit");
        assertThatThrownBy(() -> valid().consumerProperty("group.id", "x").build()).hasMessageContaining("group.id");
        assertThatThrownBy(() -> valid().producerProperty("value.serializer", "x").build())
                .hasMessageContaining("value.serializer");
        assertThat(valid().consumerProperty("auto.offset.reset", "latest").build().consumerProperties())
                .containsEntry("auto.offset.reset", "latest");
    }

    @Test
    void dead_letter_policies() {
        assertThat(((DeadLetterPolicy.Named) DeadLetterPolicy.topic("all-dlt")).topicFor("x")).isEqualTo("all-dlt");
        assertThat(((DeadLetterPolicy.Named) DeadLetterPolicy.topicPerSource(t -> "dlt." + t)).topicFor("x"))
                .isEqualTo("dlt.x");
        assertThatThrownBy(() -> DeadLetterPolicy.topicSuffix("")).hasMessageContaining("suffix");
        assertThat(valid().deadLetters(DeadLetterPolicy.logAndCommit()).build().describe())
                .contains("deadLetters=log-and-commit");
    }

    @Test
    void a_dead_letter_topic_among_the_sources_own_topics_is_refused_naming_both() {
        assertThatThrownBy(() -> KafkaSourceConfig.builder("h:1", "g").topics("orders", "orders.DLT").build())
                .isInstanceOf(MessagingConfigException.class)
                .hasMessageContaining("deadLetters")
                .hasMessageContaining("'orders'")
                .hasMessageContaining("'orders.DLT'");
        assertThatThrownBy(() -> valid().topics("all-dlt").deadLetters(DeadLetterPolicy.topic("all-dlt")).build())
                .isInstanceOf(MessagingConfigException.class)
                .hasMessageContaining("'all-dlt'");
        assertThatThrownBy(() -> valid().deadLetters(DeadLetterPolicy.topicPerSource(t -> " ")).build())
                .isInstanceOf(MessagingConfigException.class)
                .hasMessageContaining("deadLetters")
                .hasMessageContaining("'orders'");
        assertThat(valid().topics("orders.DLT.archive").build().topics()).hasSize(2);
        assertThat(
                KafkaSourceConfig.builder("h:1", "g").topicPattern(Pattern.compile("orders.*")).build().topicPattern())
                .as("a pattern is checked when publishing, not here").isNotNull();
    }

    @Test
    void a_dead_letter_producer_that_may_lose_acknowledged_dead_letters_is_refused_at_build() {
        for (String acks : new String[]{"0", "1"}) {
            assertThatThrownBy(() -> valid().producerProperty("acks", acks).build())
                    .isInstanceOf(MessagingConfigException.class)
                    .hasMessageContaining("producerProperty 'acks'").hasMessageContaining("'" + acks + "'");
        }
        assertThat(valid().producerProperty("acks", "-1").build().producerProperties()).containsEntry("acks", "-1");
        assertThatThrownBy(() -> valid().producerProperty("transactional.id", "t").build())
                .isInstanceOf(MessagingConfigException.class).hasMessageContaining("transactional.id");
        assertThatThrownBy(() -> valid().producerProperty("max.in.flight.requests.per.connection", "6").build())
                .isInstanceOf(MessagingConfigException.class)
                .hasMessageContaining("max.in.flight.requests.per.connection");
    }

    @Test
    void an_invalid_client_property_value_is_refused_at_build_naming_the_property() {
        assertThatThrownBy(() -> valid().producerProperty("linger.ms", "soon").build())
                .isInstanceOf(MessagingConfigException.class)
                .hasMessageContaining("producerProperty").hasMessageContaining("linger.ms")
                .hasMessageContaining("soon");
        assertThatThrownBy(() -> valid().consumerProperty("auto.offset.reset", "sometimes").build())
                .isInstanceOf(MessagingConfigException.class)
                .hasMessageContaining("consumerProperty").hasMessageContaining("auto.offset.reset")
                .hasMessageContaining("sometimes");
        assertThatThrownBy(() -> valid().consumerProperty("group.protocol", "consumer")
                .consumerProperty("session.timeout.ms", "10000").build())
                .as("a rule of the consumer's post-processing").isInstanceOf(MessagingConfigException.class)
                .hasMessageContaining("session.timeout.ms");
        assertThatThrownBy(() -> valid().producerProperty("linger.ms", "5")
                .producerProperty("delivery.timeout.ms", "10000").build())
                .isInstanceOf(MessagingConfigException.class)
                .hasMessageContaining("delivery.timeout.ms").hasMessageContaining("10005");
    }

    @Test
    void linger_and_a_request_timeout_above_the_broker_operation_timeout_build() {
        assertThat(valid().producerProperty("linger.ms", "5").producerProperty("request.timeout.ms", "60000").build()
                .producerProperties()).containsEntry("linger.ms", "5");
    }

    @Test
    void a_commit_interval_below_ten_milliseconds_is_refused_since_every_idle_poll_would_end_at_once() {
        for (Duration interval : new Duration[]{Duration.ZERO, Duration.ofMillis(9)}) {
            assertThatThrownBy(() -> valid().commitInterval(interval).build())
                    .isInstanceOf(MessagingConfigException.class)
                    .hasMessageContaining("commitInterval").hasMessageContaining(interval.toString())
                    .hasMessageContaining("PT0.01S");
        }
        assertThat(valid().commitInterval(KafkaSourceConfig.MIN_COMMIT_INTERVAL).build().commits().interval())
                .isEqualTo(Duration.ofMillis(10));
    }

    @Test
    void null_topics_properties_or_listeners_are_a_config_error_not_a_null_pointer() {
        KafkaSourceConfig c = valid().build();
        assertThatThrownBy(() -> new KafkaSourceConfig(c.name(), c.bootstrapServers(), c.groupId(), null,
                Pattern.compile("o.*"), c.polling(), c.commits(), c.brokerRetry(), c.deadLetters(),
                c.missingDeadLetterTopic(), c.ordering(), c.consumerProperties(), true, c.producerProperties(),
                c.listeners()))
                .isInstanceOf(MessagingConfigException.class).hasMessageContaining("topics");
        assertThatThrownBy(() -> new KafkaSourceConfig(c.name(), c.bootstrapServers(), c.groupId(), c.topics(), null,
                c.polling(), c.commits(), c.brokerRetry(), c.deadLetters(), c.missingDeadLetterTopic(), c.ordering(),
                null, true,
                c.producerProperties(), c.listeners()))
                .isInstanceOf(MessagingConfigException.class).hasMessageContaining("consumerProperty");
        assertThatThrownBy(() -> new KafkaSourceConfig(c.name(), c.bootstrapServers(), c.groupId(), c.topics(), null,
                c.polling(), c.commits(), c.brokerRetry(), c.deadLetters(), c.missingDeadLetterTopic(), c.ordering(),
                c.consumerProperties(), true,
                null, c.listeners()))
                .isInstanceOf(MessagingConfigException.class).hasMessageContaining("producerProperty");
        assertThatThrownBy(() -> new KafkaSourceConfig(c.name(), c.bootstrapServers(), c.groupId(), c.topics(), null,
                c.polling(), c.commits(), c.brokerRetry(), c.deadLetters(), c.missingDeadLetterTopic(), c.ordering(),
                c.consumerProperties(), true,
                c.producerProperties(), null))
                .isInstanceOf(MessagingConfigException.class).hasMessageContaining("listeners");
        assertThatThrownBy(() -> new KafkaSourceConfig(c.name(), c.bootstrapServers(), c.groupId(), c.topics(), null,
                c.polling(), c.commits(), c.brokerRetry(), c.deadLetters(), c.missingDeadLetterTopic(), c.ordering(),
                c.consumerProperties(), true,
                c.producerProperties(), java.util.Arrays.asList((KafkaSourceListener) null)))
                .isInstanceOf(MessagingConfigException.class).hasMessageContaining("listeners");
        assertThatThrownBy(() -> valid().missingDeadLetterTopic(null).build())
                .isInstanceOf(MessagingConfigException.class).hasMessageContaining("missingDeadLetterTopic");
    }

    @Test
    void a_null_topic_or_property_given_to_the_builder_is_a_config_error() {
        assertThatThrownBy(() -> valid().topics("a", null).build())
                .isInstanceOf(MessagingConfigException.class).hasMessageContaining("topics");
        assertThatThrownBy(() -> valid().topics((String[]) null))
                .isInstanceOf(MessagingConfigException.class).hasMessageContaining("topics");
        assertThatThrownBy(() -> valid().consumerProperty("client.id", null).build())
                .isInstanceOf(MessagingConfigException.class).hasMessageContaining("consumerProperty 'client.id'");
        assertThatThrownBy(() -> valid().producerProperty(null, "x").build())
                .isInstanceOf(MessagingConfigException.class).hasMessageContaining("producerProperty");
    }
}
