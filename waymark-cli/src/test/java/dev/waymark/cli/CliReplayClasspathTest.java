package dev.waymark.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.waymark.core.DeadLetterReason;
import dev.waymark.store.EventData;
import dev.waymark.store.EventStore;
import dev.waymark.store.ExpectedVersion;
import dev.waymark.store.RecordedEvent;
import dev.waymark.subscription.Ack;
import dev.waymark.subscription.DeadLetter;
import dev.waymark.subscription.DeadLetters;
import dev.waymark.subscription.EventHandler;
import dev.waymark.subscription.Subscription;
import dev.waymark.subscription.Target;
import dev.waymark.test.WaymarkExtension;
import dev.waymark.testkit.PostgresExtension;
import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code dead-letters replay --handler CLASS --classpath PATH}: a handler class that is not on the
 * CLI's own classpath (as with {@code java -jar}), compiled at test time into a directory and a jar.
 */
class CliReplayClasspathTest {

    @RegisterExtension
    static final PostgresExtension POSTGRES = WaymarkExtension.migratedPostgres();

    @TempDir
    static Path tmp;

    private static String url;
    private static Path classes;
    private static Path jar;
    private static List<Long> letters;

    @BeforeAll
    static void seed() throws Exception {
        url = POSTGRES.jdbcUrl();
        try (EventStore store = EventStore.builder(POSTGRES.newDataSource(4)).build()) {
            for (int i = 1; i <= 3; i++) {
                store.append("refund-" + i, ExpectedVersion.any(), EventData.json("Refund", "{}"));
            }
            try (Subscription s = Subscription.builder(store, "refunds", Target.category("refund"))
                    .start(d -> Ack.deadLetter(DeadLetterReason.poison("bank down")))) {
                Awaitility.await().atMost(Duration.ofSeconds(20))
                        .until(() -> DeadLetters.of(store).count("refunds") == 3);
            }
            letters = DeadLetters.of(store).list("refunds", Long.MAX_VALUE, 10).stream().map(DeadLetter::id).sorted()
                    .toList();
        }
        classes = compile(tmp.resolve("classes"), "plugin.dir.Refunder", """
                package plugin.dir;
                public final class Refunder implements dev.waymark.subscription.EventHandler {
                    public dev.waymark.subscription.Ack handle(dev.waymark.subscription.Delivery d) {
                        return d.event().type().equals("Refund") ? dev.waymark.subscription.Ack.ok()
                                : dev.waymark.subscription.Ack.deadLetter(
                                        dev.waymark.core.DeadLetterReason.poison("not a refund"));
                    }
                }
                """);
        compile(classes, "plugin.dir.NotAHandler", "package plugin.dir; public final class NotAHandler {}");
        Path jarClasses = compile(tmp.resolve("jar-classes"), "plugin.jar.JarRefunder", """
                package plugin.jar;
                public final class JarRefunder implements dev.waymark.subscription.EventHandler {
                    public dev.waymark.subscription.Ack handle(dev.waymark.subscription.Delivery d) {
                        return dev.waymark.subscription.Ack.ok();
                    }
                }
                """);
        jar = tmp.resolve("refunder.jar");
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar))) {
            out.putNextEntry(new JarEntry("plugin/jar/JarRefunder.class"));
            out.write(Files.readAllBytes(jarClasses.resolve("plugin/jar/JarRefunder.class")));
            out.closeEntry();
        }
    }

    /** Compiles one class against the subscription, store and core APIs into {@code dir}. */
    private static Path compile(Path dir, String className, String source) throws IOException, URISyntaxException {
        Path src = tmp.resolve("src").resolve(className.replace('.', '/') + ".java");
        Files.createDirectories(src.getParent());
        Files.writeString(src, source);
        Files.createDirectories(dir);
        String classpath = location(EventHandler.class) + File.pathSeparator + location(RecordedEvent.class)
                + File.pathSeparator + location(DeadLetterReason.class);
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        int code = javac.run(null, null, OutputStream.nullOutputStream(), "-classpath", classpath, "-d",
                dir.toString(), src.toString());
        assertThat(code).as("javac " + className).isZero();
        return dir;
    }

    private static String location(Class<?> type) throws URISyntaxException {
        return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    }

    private static CliRun replay(long letter, String... more) {
        return CliRun.of(List.of("dead-letters", "replay", "--subscription", "refunds", "--id", Long.toString(letter),
                "--force", "--url", url, "--json"), more);
    }

    @Test
    void a_handler_outside_the_clis_classpath_is_loaded_from_classpath_directories_and_jars() throws Exception {
        CliRun unseen = replay(letters.get(0), "--handler", "plugin.dir.Refunder");
        assertThat(unseen.code()).isEqualTo(2);
        assertThat(unseen.err()).startsWith("--handler plugin.dir.Refunder is not on the CLI's classpath:"
                + " give its jar or classes directory with --classpath");

        // before: "Unknown option: '--classpath'"
        CliRun fromDirectory = replay(letters.get(0), "--handler", "plugin.dir.Refunder", "--classpath",
                classes.toString());
        assertThat(fromDirectory.code()).as(fromDirectory.err()).isZero();
        assertThat(fromDirectory.json().get("letters")).singleElement()
                .satisfies(l -> assertThat(l.get("outcome").asText()).isEqualTo("ok"));

        CliRun fromJar = replay(letters.get(1), "--handler", "plugin.jar.JarRefunder", "--classpath",
                classes + File.pathSeparator + jar);
        assertThat(fromJar.code()).as(fromJar.err()).isZero();
        assertThat(fromJar.json().get("letters").get(0).get("outcome").asText()).isEqualTo("ok");
        CliRun repeated = replay(letters.get(2), "--handler", "plugin.jar.JarRefunder", "--classpath",
                classes.toString(), "--classpath", jar.toString());
        assertThat(repeated.code()).as(repeated.err()).isZero();
    }

    @Test
    void a_missing_class_a_class_that_is_no_handler_and_a_missing_entry_are_usage_errors() {
        CliRun missing = replay(letters.get(0), "--handler", "plugin.dir.Nope", "--classpath", classes.toString());
        assertThat(missing.code()).isEqualTo(2);
        assertThat(missing.err()).startsWith("--handler plugin.dir.Nope is in neither --classpath (" + classes
                + ") nor the CLI's classpath");

        CliRun notAHandler = replay(letters.get(0), "--handler", "plugin.dir.NotAHandler", "--classpath",
                classes.toString());
        assertThat(notAHandler.code()).isEqualTo(2);
        assertThat(notAHandler.err()).startsWith("--handler plugin.dir.NotAHandler is not a "
                + "dev.waymark.subscription.EventHandler");

        Path nowhere = tmp.resolve("no-such.jar");
        CliRun noEntry = replay(letters.get(0), "--handler", "plugin.dir.Refunder", "--classpath", nowhere.toString());
        assertThat(noEntry.code()).isEqualTo(2);
        assertThat(noEntry.err()).startsWith("--classpath entry '" + nowhere + "' does not exist");

        CliRun withoutHandler = CliRun.of("dead-letters", "replay", "--subscription", "refunds", "--all",
                "--classpath", classes.toString(), "--url", url);
        assertThat(withoutHandler.code()).isEqualTo(2);
        assertThat(withoutHandler.err()).startsWith("--classpath needs --handler CLASS");
    }
}
