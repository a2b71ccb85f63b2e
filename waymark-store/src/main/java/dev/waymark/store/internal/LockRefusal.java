package dev.waymark.store.internal;

import dev.waymark.store.AppendRefusedException;
import dev.waymark.store.StreamAppend;
import dev.waymark.store.plumbing.SqlErrors;
import java.sql.SQLException;
import java.util.Collection;
import java.util.List;

/**
 * The message of an append refused because the transaction got its id before it locked a stream
 * of the append (WM001): which stream, why that matters, what gives a transaction its id, and the
 * remedy the caller's situation allows.
 */
final class LockRefusal {

    private LockRefusal() {}

    /** Why the refusal matters and what causes it; the remedy follows. */
    private static final String CAUSES = ", so its events could come before earlier events of that stream in the"
            + " global order, where readers would skip or reorder them. A transaction gets its id at its first"
            + " write (an earlier write than the append), at SELECT ... FOR UPDATE or FOR SHARE, when it creates a"
            + " temporary table, and at nextval() whenever the sequence logs ahead (the first call, then about one"
            + " in 32). Remedy: ";

    static AppendRefusedException of(SQLException e, List<StreamAppend> appends, String remedy) {
        String detail = SqlErrors.serverDetail(e);
        int index = 0;
        String xid = "?";
        if (detail != null) {
            var node = Json.readObject(detail, "refusal detail");
            index = Math.min(node.path("index").asInt(0), appends.size() - 1);
            xid = node.path("xid").asText("?");
        }
        String stream = appends.get(index).streamName();
        return new AppendRefusedException("append to " + quoted(appends.stream().map(StreamAppend::streamName).toList())
                + " refused: the transaction already has transaction id " + xid + " and did not lock stream '"
                + stream + "' before it got it" + CAUSES + remedy, e.getSQLState(), e);
    }

    /** The names, each in quotes: {@code 'a'} for one, {@code ['a', 'b']} for several. */
    static String quoted(Collection<String> streams) {
        List<String> names = streams.stream().map(s -> "'" + s + "'").toList();
        return names.size() == 1 ? "stream " + names.get(0) : "streams " + names;
    }
}
