package dev.waymark.testkit;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Gives a test class the JVM's in-process Kafka broker ({@link KafkaBroker}) and a topic namespace
 * of its own, so classes never see each other's topics. Register it as a static field:
 *
 * <pre>{@code
 * @RegisterExtension
 * static final KafkaExtension KAFKA = new KafkaExtension();
 * ...
 * String topic = KAFKA.createTopic("payments", 3);
 * }</pre>
 *
 * <p>The broker does not create topics on first use ({@code auto.create.topics.enable=false}, as
 * production clusters usually run): a test creates every topic it uses, and a client that needs a
 * missing one sees it missing.
 */
public final class KafkaExtension implements BeforeAllCallback, AfterAllCallback {

    private String prefix;
    private Admin admin;

    @Override
    public void beforeAll(ExtensionContext context) {
        String owner = context.getRequiredTestClass().getSimpleName().toLowerCase(Locale.ROOT);
        prefix = (owner.length() > 40 ? owner.substring(0, 40) : owner) + "-"
                + Long.toString(ThreadLocalRandom.current().nextLong(1L << 30), 36) + "-";
        admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers()));
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (admin != null) {
            admin.close();
        }
    }

    /** The broker's bootstrap servers. */
    public String bootstrapServers() {
        return KafkaBroker.get().bootstrapServers();
    }

    /** This class's name for topic {@code base}. */
    public String topic(String base) {
        if (prefix == null) {
            throw new IllegalStateException("KafkaExtension is not started: register it on a static field"
                    + " with @RegisterExtension");
        }
        return prefix + base;
    }

    /** Creates this class's topic {@code base} with {@code partitions} partitions and returns its name. */
    public String createTopic(String base, int partitions) {
        return createTopic(base, partitions, Map.of());
    }

    /**
     * Creates this class's topic {@code base} with {@code partitions} partitions and the topic
     * configuration {@code configs} (such as {@code max.message.bytes}), and returns its name.
     */
    public String createTopic(String base, int partitions, Map<String, String> configs) {
        String name = topic(base);
        try {
            admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1).configs(configs)))
                    .all().get(30, TimeUnit.SECONDS);
            return name;
        } catch (Exception e) {
            throw new IllegalStateException("could not create topic " + name, e);
        }
    }

    /** An admin client on the broker, closed after the class. */
    public Admin admin() {
        return admin;
    }
}
