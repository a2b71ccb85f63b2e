package dev.waymark.store;

import java.sql.Connection;
import java.util.List;

/**
 * A transaction opened by {@link EventStore#inTransaction(TransactionWork)}: append first, then
 * run application SQL on {@link #connection()}; everything commits together.
 */
public interface StoreTransaction {

    /** The transaction's connection, for application SQL. Do not commit, roll back or close it. */
    Connection connection();

    /** Appends as the transaction's first write; see {@link EventStore#append(Connection, String, ExpectedVersion, List)}. */
    AppendResult append(String stream, ExpectedVersion expected, List<EventData> events);

    /** Appends to several streams as the transaction's first write. */
    List<AppendResult> appendMultiStream(List<StreamAppend> appends);
}
