package dev.waymark.cli.demo;

/**
 * How the fulfilment workflow's charge step requests a payment: a Kafka record on the
 * {@code payments} topic keyed by order (when the demo has a broker), or nothing.
 */
public interface DemoPayments extends DemoWorkflows.Payments, AutoCloseable {

    /** A producer to {@code bootstrap}, or a no-op for "-". */
    static DemoPayments producer(String bootstrap) {
        if (bootstrap == null || bootstrap.equals("-")) {
            return new DemoPayments() {
                @Override
                public void requestPayment(DemoWorkflows.Order order) {}

                @Override
                public void close() {}
            };
        }
        throw new IllegalArgumentException("Kafka payments are not wired yet");
    }

    @Override
    void close();
}
