package dev.waymark.cli;

import dev.waymark.store.RecordedEvent;
import dev.waymark.store.StreamInfo;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code waymark streams list|read}. */
@Command(name = "streams", description = "List streams and read their events.",
        subcommands = {StreamsCommand.ListStreams.class, StreamsCommand.Read.class})
final class StreamsCommand {

    @ParentCommand
    WaymarkCli root;

    /** One stream as printed. */
    record StreamRow(String name, String category, long version, String createdAt, String deletedAt) {}

    /** One event as printed. */
    record EventRow(long version, String position, String type, String eventId, String createdAt, String data) {}

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

        @Option(names = "--limit", defaultValue = "100", description = "at most this many (default: ${DEFAULT-VALUE})")
        int limit;

        @Override
        public Integer call() {
            WaymarkCli cli = parent.root;
            List<StreamInfo> streams = cli.withStore(store -> store.listStreams(category, after, limit));
            List<StreamRow> rows = streams.stream().map(s -> new StreamRow(s.name(), s.category(), s.version(),
                    s.createdAt().toString(), s.deletedAt().map(Object::toString).orElse(null))).toList();
            StringBuilder text = new StringBuilder(String.format("%-40s %8s  %s%n", "STREAM", "VERSION", "DELETED"));
            rows.forEach(r -> text.append(String.format("%-40s %8d  %s%n", r.name(), r.version(),
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

        @Option(names = "--limit", defaultValue = "100", description = "at most this many (default: ${DEFAULT-VALUE})")
        int limit;

        @Override
        public Integer call() {
            WaymarkCli cli = parent.root;
            List<RecordedEvent> events = cli.withStore(store -> {
                if (store.streamInfo(stream).isEmpty()) {
                    throw new IllegalArgumentException("no stream named '" + stream + "'");
                }
                return store.readStreamForward(stream, after, limit);
            });
            List<EventRow> rows = events.stream().map(e -> new EventRow(e.streamVersion(), e.position().toString(),
                    e.type(), e.eventId().toString(), e.createdAt().toString(), e.data())).toList();
            StringBuilder text = new StringBuilder();
            rows.forEach(r -> text.append(String.format("%6d  %-24s %s%n", r.version(), r.type(), r.data())));
            cli.print(spec.commandLine().getOut(), rows, text.toString());
            return 0;
        }
    }
}
