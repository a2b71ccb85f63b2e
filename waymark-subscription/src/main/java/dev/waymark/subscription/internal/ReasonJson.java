package dev.waymark.subscription.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.waymark.subscription.DeadLetterReason;

/** The JSON form of a {@link DeadLetterReason}, with a mapper nobody else can reconfigure. */
public final class ReasonJson {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private ReasonJson() {}

    /** The reason as a JSON object: its kind, summary and details. */
    public static String of(DeadLetterReason reason) {
        ObjectNode node = MAPPER.createObjectNode().put("kind", reason.kind()).put("summary", reason.summary());
        switch (reason) {
            case DeadLetterReason.Poison p -> node.put("detail", p.detail());
            case DeadLetterReason.Invalid i -> node.put("detail", i.detail());
            case DeadLetterReason.MaxAttempts m -> node.put("attempts", m.attempts());
            case DeadLetterReason.Other o -> {
                if (o.json() != null) {
                    try {
                        node.set("detail", MAPPER.readTree(o.json()));
                    } catch (JsonProcessingException e) {
                        node.put("detail", o.json()); // not JSON: kept as text
                    }
                }
            }
        }
        return node.toString();
    }
}
