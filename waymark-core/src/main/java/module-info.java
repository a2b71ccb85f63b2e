/**
 * Waymark's shared vocabulary ({@code dev.waymark.core}): the types every other Waymark module speaks.
 * Requires nothing but {@code java.base}, so that a module reading it (the messaging runtime, the Kafka
 * adapter) pulls no third-party library with it.
 */
module dev.waymark.core {
    exports dev.waymark.core;
}
