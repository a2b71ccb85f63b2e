package dev.waymark.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.datatype.jdk8.Jdk8Module;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.pool.HikariPool;
import dev.waymark.store.EventStore;
import dev.waymark.store.Migrations;
import dev.waymark.store.StoreConfigException;
import dev.waymark.store.SchemaNotMigratedException;
import dev.waymark.store.StoreException;
import dev.waymark.store.StoreUnavailableException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.function.Function;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;

/**
 * The {@code waymark} operator command line. Exit codes: 0 success, 1 the operation failed,
 * 2 bad usage, 3 the database is unreachable or refused the login, 4 the schema is missing or not
 * migrated, 5 a named subscription, pool, worker, stream, workflow, awakeable or dead letter does not
 * exist. Errors are one line on stderr; {@code --verbose} adds the stack trace. Every command answers
 * {@code --help} / {@code -h}.
 */
// scope INHERIT: every subcommand, present and future, gets -h/--help and -V/--version
@Command(name = "waymark", scope = ScopeType.INHERIT, mixinStandardHelpOptions = true, version = "waymark 0.1.0-SNAPSHOT", description = "Operate a Waymark event store: migrations, subscriptions, shards, workflows, dead letters.", subcommands = {
        MigrateCommand.class, StreamsCommand.class, SubscriptionsCommand.class, ShardsCommand.class,
        WorkflowsCommand.class, DeadLettersCommand.class})
public final class WaymarkCli {

    /** Exit code: the operation failed. */
    public static final int FAILED = 1;
    /** Exit code: the database is unreachable or refused the login. */
    public static final int UNREACHABLE = 3;
    /** Exit code: the schema is missing or not migrated. */
    public static final int NO_SCHEMA = 4;
    /** Exit code: a named subscription, pool, worker, stream, workflow, awakeable or dead letter does not exist. */
    public static final int NOT_FOUND = 5;

    @Option(names = "--url", scope = ScopeType.INHERIT, defaultValue = "${env:WAYMARK_DATABASE_URL}", description = "JDBC URL of the database (default: $WAYMARK_DATABASE_URL)")
    String url;

    @Option(names = "--schema", scope = ScopeType.INHERIT, defaultValue = "waymark", description = "Waymark's schema (default: ${DEFAULT-VALUE})")
    String schema;

    @Option(names = "--json", scope = ScopeType.INHERIT, description = "print JSON instead of text")
    boolean json;

    @Option(names = "--verbose", scope = ScopeType.INHERIT, description = "print stack traces of errors")
    boolean verbose;

    /** The largest {@code --limit} any command takes. */
    static final int MAX_LIMIT = 10_000;
    /** The default {@code --limit} of {@code workflows list} and {@code dead-letters list} (rows per page). */
    static final String DEFAULT_LIST_LIMIT = "50";
    /** The default {@code --limit} of {@code streams list} and {@code streams read}. */
    static final String DEFAULT_STREAM_LIMIT = "100";
    /** The default {@code --limit} of {@code workflows collect} (instances per pass). */
    static final String DEFAULT_COLLECT_LIMIT = "100";

    /**
     * The CLI's one JSON mapper, its modules pinned (java.time instants and dates as ISO-8601 text, Optional): the
     * {@code --json} output does not depend on which Jackson modules are on the class path.
     */
    static final ObjectMapper JSON = JsonMapper.builder()
            .addModule(new JavaTimeModule())
            .addModule(new Jdk8Module())
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS) // durations stay numbers of seconds
            .build();

    /** Runs the command line and exits with its code. */
    public static void main(String[] args) {
        System.exit(run(new PrintWriter(System.out, true), new PrintWriter(System.err, true), args));
    }

    /** Runs the command line with the given output streams and returns the exit code. */
    public static int run(PrintWriter out, PrintWriter err, String... args) {
        WaymarkCli root = new WaymarkCli();
        CommandLine cli = new CommandLine(root);
        cli.setOut(out);
        cli.setErr(err);
        cli.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            if (e instanceof NoDatabaseUrl || e instanceof UsageError) { // found before connecting: usage
                return commandLine.getParameterExceptionHandler().handleParseException(
                        new CommandLine.ParameterException(commandLine, e.getMessage()), args);
            }
            int code = e instanceof NotFoundException
                    ? NOT_FOUND
                    : e instanceof SchemaNotMigratedException
                            ? NO_SCHEMA
                            : e instanceof StoreUnavailableException
                                    || e instanceof HikariPool.PoolInitializationException
                                            ? UNREACHABLE
                                            : FAILED;
            err.println("waymark: " + oneLine(e));
            if (root.verbose) {
                e.printStackTrace(err);
            }
            return code;
        });
        return cli.execute(args);
    }

    private static String oneLine(Throwable e) {
        Throwable root = e;
        if (e instanceof HikariPool.PoolInitializationException && e.getCause() != null) {
            root = e.getCause();
            return "cannot connect to the database: " + root.getMessage().lines().findFirst().orElse("");
        }
        String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        return message.lines().findFirst().orElse(message);
    }

    /** Runs {@code work} with a store on the configured database. */
    <T> T withStore(Function<EventStore, T> work) {
        return withStore(false, work);
    }

    /**
     * Runs {@code work} with a store on the configured database; with {@code listen}, the store's
     * wake signal also hears NOTIFY from other processes' appends (one more connection).
     */
    <T> T withStore(boolean listen, Function<EventStore, T> work) {
        if (url == null || url.isBlank()) {
            throw new NoDatabaseUrl();
        }
        requireUrl();
        requireSchema();
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(listen ? 3 : 2);
        config.setInitializationFailTimeout(1);
        config.setConnectionTimeout(5_000);
        config.setPoolName("waymark-cli");
        try (HikariDataSource dataSource = new HikariDataSource(config);
                EventStore store = EventStore.builder(dataSource).schema(schema).notifications(listen).build()) {
            return work.apply(store);
        }
    }

    /**
     * Refuses a URL that pgjdbc cannot parse as a usage error (exit 2), before connecting; before,
     * HikariCP's "Failed to get driver instance" exited 1 after a driver warning on stderr.
     */
    private void requireUrl() {
        // the driver logs a WARNING through java.util.logging for some malformed URLs: the error below says it all
        java.util.logging.Logger driverLog = java.util.logging.Logger.getLogger("org.postgresql.Driver");
        java.util.logging.Level level = driverLog.getLevel();
        driverLog.setLevel(java.util.logging.Level.OFF);
        try {
            if (!url.startsWith("jdbc:postgresql:") || org.postgresql.Driver.parseURL(url, null) == null) {
                // never echo a password given in the URL
                String shown = url.replaceAll("(?i)(password=)[^&]*", "$1***");
                throw new UsageError("--url '" + shown + "' is not a PostgreSQL JDBC URL: give"
                        + " jdbc:postgresql://HOST[:PORT]/DATABASE[?user=NAME&...] (parameters percent-encoded)");
            }
        } finally {
            driverLog.setLevel(level);
        }
    }

    /** Refuses a schema name the store would refuse, as a usage error (exit 2), before connecting. */
    void requireSchema() {
        try {
            new Migrations(null, schema); // validates the name only
        } catch (StoreConfigException e) {
            throw new UsageError("--schema: " + e.getMessage());
        }
    }

    /** A bad option value found by the root's checks: a usage error (exit 2) of the command that ran. */
    private static final class UsageError extends RuntimeException {
        private static final long serialVersionUID = 1L;

        UsageError(String message) {
            super(message);
        }
    }

    /** No {@code --url} and no {@code WAYMARK_DATABASE_URL}: a usage error (exit 2), raised before connecting. */
    private static final class NoDatabaseUrl extends RuntimeException {
        private static final long serialVersionUID = 1L;

        NoDatabaseUrl() {
            super("no database URL: give --url JDBC_URL or set the environment variable WAYMARK_DATABASE_URL");
        }
    }

    /** Refuses a {@code --limit} outside 1-10000 as a usage error (exit 2), before any connection. */
    static void requireLimit(CommandSpec spec, int limit) {
        if (limit < 1 || limit > MAX_LIMIT) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--limit must be between 1 and " + MAX_LIMIT
                    + ", got " + limit);
        }
    }

    /** {@code value} as one line of JSON. */
    static String jsonLine(Object value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new StoreException("cannot print JSON: " + e.getOriginalMessage());
        }
    }

    /**
     * Reads a positive duration as {@code 500ms}, {@code 30s}, {@code 5m}, {@code 2h}, {@code 7d} or
     * ISO-8601 ({@code PT30S}).
     */
    static final class DurationConverter implements CommandLine.ITypeConverter<Duration> {
        @Override
        public Duration convert(String value) {
            return duration(value, false);
        }
    }

    /** Reads a duration of zero or more, as {@link DurationConverter} does ({@code 0s} included). */
    static final class NonNegativeDurationConverter implements CommandLine.ITypeConverter<Duration> {
        @Override
        public Duration convert(String value) {
            return duration(value, true);
        }
    }

    private static Duration duration(String value, boolean zero) {
        String v = value.strip().toLowerCase(java.util.Locale.ROOT);
        try {
            Duration d;
            if (v.startsWith("pt")) {
                d = Duration.parse(v);
            } else if (v.endsWith("ms")) {
                d = Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
            } else if (v.endsWith("s")) {
                d = Duration.ofSeconds(Long.parseLong(v.substring(0, v.length() - 1)));
            } else if (v.endsWith("m")) {
                d = Duration.ofMinutes(Long.parseLong(v.substring(0, v.length() - 1)));
            } else if (v.endsWith("h")) {
                d = Duration.ofHours(Long.parseLong(v.substring(0, v.length() - 1)));
            } else if (v.endsWith("d")) {
                d = Duration.ofDays(Long.parseLong(v.substring(0, v.length() - 1)));
            } else {
                throw new NumberFormatException();
            }
            if (d.isNegative() || (d.isZero() && !zero)) {
                throw new NumberFormatException();
            }
            return d;
        } catch (NumberFormatException | java.time.format.DateTimeParseException | ArithmeticException e) {
            throw new CommandLine.TypeConversionException("'" + value + "' is not a " + (zero
                    ? "duration of"
                            + " zero or more"
                    : "positive duration") + " (like " + (zero ? "0s, " : "")
                    + "500ms, 30s, 5m, 2h, 7d or PT30S)");
        }
    }

    /** A duration for people: {@code 0s}, {@code 1.5s}, {@code 3m05s}. */
    static String human(Duration d) {
        long ms = d.toMillis();
        if (ms < 60_000) {
            return ms % 1000 == 0 ? ms / 1000 + "s" : String.format(java.util.Locale.ROOT, "%.1fs", ms / 1000.0);
        }
        long s = d.toSeconds();
        return s < 3600
                ? String.format("%dm%02ds", s / 60, s % 60)
                : String.format("%dh%02dm", s / 3600, s % 3600 / 60);
    }

    /** Prints {@code value} as JSON, or {@code text} when not in JSON mode. */
    void print(PrintWriter out, Object value, String text) {
        if (json) {
            try {
                out.println(JSON.writerWithDefaultPrettyPrinter().writeValueAsString(value));
            } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                throw new StoreException("cannot print JSON: " + e.getOriginalMessage());
            }
        } else {
            out.print(text);
            out.flush();
        }
    }
}
