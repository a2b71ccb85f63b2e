package dev.waymark.workflow;

import dev.waymark.workflow.internal.Args;
import dev.waymark.workflow.exception.InvalidWorkflowInputException;
import dev.waymark.workflow.status.WorkflowInfo;
import dev.waymark.workflow.status.WorkflowStatus;
import java.util.Optional;

/**
 * Which instances {@link WorkflowClient#list} returns: optionally one status and one workflow name,
 * one page of at most {@link #limit()} instances in (name, id) order, after a cursor. Immutable;
 * made by {@link #builder()}, the next page by {@link #after(WorkflowInfo)}.
 *
 * <pre>{@code
 * WorkflowQuery query = WorkflowQuery.builder().status(WorkflowStatus.FAILED).name("billing").limit(50).build();
 * List<WorkflowInfo> page = client.list(query);
 * while (!page.isEmpty()) {
 *     // ...
 *     page = client.list(query = query.after(page.get(page.size() - 1)));
 * }
 * }</pre>
 */
public final class WorkflowQuery {

    /** The default {@link #limit()}: 100 instances per page. */
    public static final int DEFAULT_LIMIT = 100;

    /** The largest {@link #limit()}. */
    public static final int MAX_LIMIT = 10_000;

    private final WorkflowStatus status;
    private final String name;
    private final String afterName;
    private final String afterId;
    private final int limit;

    private WorkflowQuery(WorkflowStatus status, String name, String afterName, String afterId, int limit) {
        this.status = status;
        this.name = name;
        this.afterName = afterName;
        this.afterId = afterId;
        this.limit = limit;
    }

    /** A builder of the first page of every instance, {@link #DEFAULT_LIMIT} at a time. */
    public static Builder builder() {
        return new Builder();
    }

    /** The status the instances have, if the query filters on one. */
    public Optional<WorkflowStatus> status() {
        return Optional.ofNullable(status);
    }

    /** The workflow name the instances have, if the query filters on one. */
    public Optional<String> name() {
        return Optional.ofNullable(name);
    }

    /** The workflow name of the cursor: the page holds instances after (afterName, afterId). */
    public Optional<String> afterName() {
        return Optional.ofNullable(afterName);
    }

    /** The id of the cursor; present exactly when {@link #afterName()} is. */
    public Optional<String> afterId() {
        return Optional.ofNullable(afterId);
    }

    /** The most instances the page holds, in [1, {@link #MAX_LIMIT}]. */
    public int limit() {
        return limit;
    }

    /**
     * The same query for the page after {@code last} (the last instance of this query's page).
     *
     * @throws InvalidWorkflowInputException if {@code last} is null
     */
    public WorkflowQuery after(WorkflowInfo last) {
        if (last == null) {
            throw new InvalidWorkflowInputException("last must not be null");
        }
        return new WorkflowQuery(status, name, last.name(), last.id(), limit);
    }

    @Override
    public String toString() {
        return "WorkflowQuery[status=" + status + ", name=" + name + ", after="
                + (afterName == null ? null : afterName + "/" + afterId) + ", limit=" + limit + "]";
    }

    /** Builds a {@link WorkflowQuery}; {@link #build()} validates. Not thread-safe. */
    public static final class Builder {
        private WorkflowStatus status;
        private String name;
        private String afterName;
        private String afterId;
        private int limit = DEFAULT_LIMIT;

        private Builder() {}

        /** Only instances in {@code status}; null for every status (the default). */
        public Builder status(WorkflowStatus status) {
            this.status = status;
            return this;
        }

        /** Only instances of workflow {@code name}; null for every name (the default). */
        public Builder name(String name) {
            this.name = name;
            return this;
        }

        /**
         * The page after instance ({@code name}, {@code id}); both null for the first page (the
         * default), never only one of them.
         */
        public Builder after(String name, String id) {
            this.afterName = name;
            this.afterId = id;
            return this;
        }

        /** The most instances on the page, in [1, {@link #MAX_LIMIT}] (default {@link #DEFAULT_LIMIT}). */
        public Builder limit(int limit) {
            this.limit = limit;
            return this;
        }

        /**
         * The query.
         *
         * @throws InvalidWorkflowInputException if the limit is outside [1, {@link #MAX_LIMIT}], or only one
         *     of the cursor's name and id is given
         */
        public WorkflowQuery build() {
            Args.inRange(limit, "limit");
            if ((afterName == null) != (afterId == null)) {
                throw new InvalidWorkflowInputException("afterName and afterId go together");
            }
            return new WorkflowQuery(status, name, afterName, afterId, limit);
        }
    }
}
