package dev.waymark.cli;

import dev.waymark.cli.Output.StoredJson;
import dev.waymark.store.RecordedEvent;
import dev.waymark.store.StreamInfo;
import dev.waymark.store.StreamNames;
import dev.waymark.store.EventStore;
import dev.waymark.store.GlobalPosition;
import dev.waymark.store.WakeSignal;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code waymark streams list|read|tail}. */
@Command(name = "streams", description = "List streams, read their events, follow them live.", subcommands = {
        StreamsCommand.ListStreams.class, StreamsCommand.Read.class, StreamsCommand.Tail.class})
final class StreamsCommand {

    @ParentCommand
    WaymarkCli root;

    /** One stream as printed. */
    record StreamRow(String name, String category, long version, String createdAt, String deletedAt) {}

    /** One event as printed; its data and metadata nest as JSON. */
    record EventRow(long version, String position, String type, String eventId, String createdAt, StoredJson data,
            StoredJson metadata, String causationId, String correlationId) {
        static EventRow of(RecordedEvent e) {
            return new EventRow(e.streamVersion(), e.position().toString(), e.type(), e.eventId().toString(),
                    e.createdAt().toString(), StoredJson.of(e.data()), StoredJson.of(e.metadata()),
                    text(e.causationId()), text(e.correlationId()));
        }
    }

    private static String text(Object value) {
        return value == null ? null : value.toString();
    }

    @Command(name = "list", description = "Streams by name, optionally of one category.")
    static final class ListStreams implements Callable<Integer> {
        @ParentCommand
        StreamsCommand parent;

        @Spec
        CommandSpec spec;

        @Option(names = "--category", description = "only this category")
        String category;

        @Option(names = "--after", defaultValue = "", description = "start after this stream name")
        String after;

        @Option(names = "--limit", defaultValue = WaymarkCli.DEFAULT_STREAM_LIMIT, description = "at most this many, 1-10000 (default: ${DEFAULT-VALUE})")
        int limit;

        @Override
        public Integer call() {
            WaymarkCli cli = parent.root;
            WaymarkCli.requireLimit(spec, limit);
            List<StreamInfo> streams = cli.withStore(store -> store.listStreams(category, after, limit));
            List<StreamRow> rows = streams.stream().map(s -> new StreamRow(s.name(), s.category(), s.version(),
                    s.createdAt().toString(), s.deletedAt().map(Object::toString).orElse(null))).toList();
            StringBuilder text = new StringBuilder(String.format("%-40s %8s  %s%n", "STREAM", "VERSION", "DELETED"));
            rows.forEach(r -> text.append(Output.row("%-40s %8d  %s%n", r.name(), r.version(),
                    r.deletedAt() == null ? "-" : r.deletedAt())));
            cli.print(spec.commandLine().getOut(), rows, text.toString());
            return 0;
        }
    }

    @Command(name = "read", description = "A stream's events, oldest first.")
    static final class Read implements Callable<Integer> {
        @ParentCommand
        StreamsCommand parent;

        @Spec
        CommandSpec spec;

        @Option(names = "--stream", required = true, description = "the stream")
        String stream;

        @Option(names = "--after", defaultValue = "0", description = "start after this version")
        long after;

        @Option(names = "--limit", defaultValue = WaymarkCli.DEFAULT_STREAM_LIMIT, description = "at most this many, 1-10000 (default: ${DEFAULT-VALUE})")
        int limit;

        @Override
        public Integer call() {
            WaymarkCli cli = parent.root;
            WaymarkCli.requireLimit(spec, limit);
            List<RecordedEvent> events = cli.withStore(store -> {
                if (store.streamInfo(stream).isEmpty()) {
                    throw unknownStream(store, stream);
                }
                return store.readStreamForward(stream, after, limit);
            });
            List<EventRow> rows = events.stream().map(EventRow::of).toList();
            StringBuilder text = new StringBuilder();
            rows.forEach(r -> text.append(Output.row("%6d  %-24s %s%n", r.version(), r.type(), r.data())));
            cli.print(spec.commandLine().getOut(), rows, text.toString());
            return 0;
        }
    }

    /** The most streams of the category searched for names close to an unknown one. */
    private static final int NEARBY = 1_000;

    /** An unknown stream, with close matches among the first streams of its category. */
    static NotFoundException unknownStream(EventStore store, String name) {
        List<String> nearby = store.listStreams(StreamNames.category(name), "", NEARBY).stream()
                .map(StreamInfo::name).toList();
        List<String> close = Names.closeMatches(name, nearby);
        return new NotFoundException("no stream named " + Names.quote(name)
                + (close.isEmpty() ? "" : Names.didYouMean(close)));
    }

    /** One followed event as printed; its data and metadata nest as JSON. */
    record TailRow(String position, String stream, long version, String type, String eventId, String createdAt,
            StoredJson data, StoredJson metadata, String causationId, String correlationId) {}

    @Command(name = "tail", description = "Follow all streams or one category live, printing each event as it "
            + "commits, in global order; stops after --limit events, after --timeout, or on Ctrl-C.")
    static final class Tail implements Callable<Integer> {
        private static final int PAGE = 500;
        private static final Duration MAX_WAIT = Duration.ofSeconds(1);

        @ParentCommand
        StreamsCommand parent;

        @Spec
        CommandSpec spec;

        @Option(names = "--category", description = "only this category (default: every stream)")
        String category;

        @Option(names = "--from", defaultValue = "head", description = "head (only events after the newest one now; default), start, or a position tx/seq")
        String from;

        @Option(names = "--limit", description = "stop after this many events, at least 1 (default: no limit)")
        Integer limit;

        @Option(names = "--timeout", converter = WaymarkCli.DurationConverter.class, description = "stop after this long, e.g. 500ms, 30s, 5m (default: no timeout)")
        Duration timeout;

        @Override
        public Integer call() {
            WaymarkCli cli = parent.root;
            if (limit != null && limit < 1) { // a count of events to follow, not a page: no upper bound
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "--limit must be at least 1, got " + limit);
            }
            GlobalPosition start = switch (from) {
                case "head" -> null;
                case "start" -> GlobalPosition.START;
                default -> {
                    try {
                        yield GlobalPosition.parse(from);
                    } catch (IllegalArgumentException e) {
                        throw new CommandLine.ParameterException(spec.commandLine(),
                                "--from takes head, start or a position tx/seq, got '" + from + "'");
                    }
                }
            };
            long deadline = timeout == null ? Long.MAX_VALUE : System.nanoTime() + timeout.toNanos();
            PrintWriter out = spec.commandLine().getOut();
            AtomicBoolean stop = new AtomicBoolean();
            CountDownLatch done = new CountDownLatch(1);
            Thread tail = Thread.currentThread();
            // Ctrl-C: stop reading, let the store close and the output flush, then let the JVM exit.
            Thread onInterrupt = new Thread(() -> {
                stop.set(true);
                tail.interrupt();
                try {
                    done.await(2, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "waymark-tail-stop");
            Runtime.getRuntime().addShutdownHook(onInterrupt);
            try {
                cli.withStore(true, store -> follow(cli, store, start, deadline, stop, out));
            } catch (RuntimeException e) {
                if (!stop.get()) {
                    throw e;
                }
            } finally {
                Thread.interrupted();
                out.flush();
                done.countDown();
                try {
                    Runtime.getRuntime().removeShutdownHook(onInterrupt);
                } catch (IllegalStateException shuttingDown) {
                    // the hook is running: Ctrl-C
                }
            }
            return 0;
        }

        private int follow(WaymarkCli cli, EventStore store, GlobalPosition start, long deadline, AtomicBoolean stop,
                PrintWriter out) {
            WakeSignal wake = store.wakeSignal();
            GlobalPosition after = start != null ? start : store.headPosition();
            int printed = 0;
            while (!stop.get() && (limit == null || printed < limit) && System.nanoTime() < deadline) {
                long seen = wake.generation();
                int want = limit == null ? PAGE : Math.min(PAGE, limit - printed);
                List<RecordedEvent> page = category == null
                        ? store.readAllForward(after, want)
                        : store.readCategoryForward(category, after, want);
                for (RecordedEvent e : page) {
                    print(cli, e, out);
                    after = e.position();
                    printed++;
                }
                if (page.size() == want) {
                    continue;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                try {
                    wake.awaitAfter(seen, left < MAX_WAIT.toNanos() ? Duration.ofNanos(left) : MAX_WAIT);
                } catch (InterruptedException e) {
                    break;
                }
            }
            return printed;
        }

        private static void print(WaymarkCli cli, RecordedEvent e, PrintWriter out) {
            TailRow row = new TailRow(e.position().toString(), e.streamName(), e.streamVersion(), e.type(),
                    e.eventId().toString(), e.createdAt().toString(), StoredJson.of(e.data()),
                    StoredJson.of(e.metadata()), text(e.causationId()), text(e.correlationId()));
            out.println(cli.json
                    ? WaymarkCli.jsonLine(row)
                    : Output.row("%-16s %-32s %-24s %s", row.position(),
                            row.stream() + "@" + row.version(), row.type(), row.data()));
            out.flush();
        }
    }
}
