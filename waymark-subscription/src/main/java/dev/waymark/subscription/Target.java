package dev.waymark.subscription;

/** What a subscription reads: every stream, or the streams of one category. */
public sealed interface Target {

    /** Every stream of the store. */
    static Target all() {
        return All.INSTANCE;
    }

    /** The streams whose category is {@code category} (the part of the name before the first '-'). */
    static Target category(String category) {
        return new Category(category);
    }

    /** Every stream. */
    enum All implements Target {
        /** The only instance. */
        INSTANCE;

        @Override
        public String toString() {
            return "all";
        }
    }

    /**
     * One category.
     *
     * @param name the category, non-empty and without '-'
     */
    record Category(String name) implements Target {
        /** Validates the name. */
        public Category {
            if (name == null || name.isEmpty() || name.indexOf('-') >= 0) {
                throw new SubscriptionConfigException("target category must be non-empty and contain no '-', got "
                        + (name == null ? "null" : "'" + name + "'"));
            }
        }

        @Override
        public String toString() {
            return "category(" + name + ")";
        }
    }
}
