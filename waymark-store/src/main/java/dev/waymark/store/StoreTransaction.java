package dev.waymark.store;

import java.sql.Connection;
import java.util.List;

/**
 * A transaction opened by {@link EventStore#inTransaction(TransactionWork)}: appends and
 * application SQL on {@link #connection()}, in any order, commit together. An append after a
 * statement that gave the transaction its id makes the work run again (see
 * {@link EventStore#inTransaction(TransactionWork)}); appending first avoids that.
 */
public interface StoreTransaction {

    /** The transaction's connection, for application SQL. Do not commit, roll back or close it. */
    Connection connection();

    /**
     * Appends inside the transaction; see {@link EventStore#append(String, ExpectedVersion, List)}
     * for the outcomes, and {@link EventStore#inTransaction(TransactionWork)} for appends after
     * other statements.
     */
    AppendResult append(String stream, ExpectedVersion expected, List<EventData> events);

    /** Appends to several streams atomically inside the transaction; see {@link #append}. */
    List<AppendResult> appendMultiStream(List<StreamAppend> appends);
}
