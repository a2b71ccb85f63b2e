package dev.waymark.messaging;

import java.util.ArrayList;
import java.util.List;

/** The adapter contract for {@link InMemorySource}. */
class InMemorySourceContractTest extends MessageSourceContract {

    @Override
    protected Fixture fixture(int messages) {
        InMemorySource source = new InMemorySource("mem");
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < messages; i++) {
            source.send("k", "m" + i);
            ids.add("mem-" + (i + 1));
        }
        return new Fixture() {
            @Override
            public MessageSource source() {
                return source;
            }

            @Override
            public List<String> expectedIds() {
                return ids;
            }

            @Override
            public boolean allAcknowledged() {
                return source.decisions().stream().filter(d -> d.decision() instanceof AckDecision.Ok)
                        .map(InMemorySource.Finalized::messageId).distinct().count() == ids.size();
            }

            @Override
            public void close() {
                source.shutdown();
            }
        };
    }
}
