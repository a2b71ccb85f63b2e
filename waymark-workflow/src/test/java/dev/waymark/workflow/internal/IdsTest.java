package dev.waymark.workflow.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Journal entry ids are frozen replay identity: UUIDv5 (SHA-1, not Java's v3) over UTF-8. The
 * vectors were computed with Python's uuid.uuid5; the first three are the reference's published ones.
 */
class IdsTest {

    @Test
    void uuid5_matches_the_reference_vectors() {
        assertThat(Ids.uuid5(Ids.NAMESPACE_URL, "keiro:workflow:orderFulfillment:wf-1:0:charge-card"))
                .isEqualTo(UUID.fromString("1618b21a-5321-536f-998b-99f88f078148"));
        assertThat(Ids.uuid5(Ids.NAMESPACE_URL, "keiro:workflow:orderFulfillment:wf-1:1:charge-card"))
                .isEqualTo(UUID.fromString("ddbf5d19-df0d-50f7-9aa2-9c8214bfde00"));
        assertThat(Ids.uuid5(Ids.NAMESPACE_URL, "keiro:workflow:orderFulfillment:wf-1:0:__workflow_completed__"))
                .isEqualTo(UUID.fromString("5ac985e8-4168-5705-91bc-5523833d3f60"));
    }

    @Test
    void waymark_entry_ids_are_frozen() {
        assertThat(Ids.entryId("orderFulfillment", "wf-1", 0, "charge-card"))
                .isEqualTo(UUID.fromString("82cdf585-7e4a-5cb1-9c48-cf4986db7866"));
        assertThat(Ids.entryId("fulfil", "order-42", 3, "sleep:cool-off"))
                .isEqualTo(UUID.fromString("a1b2589b-4991-54fd-88ff-5e5f97e52ca2"));
        assertThat(Ids.entryId("fulfil", "€uro-1", 0, "__started__"))
                .isEqualTo(UUID.fromString("0a7f83e0-5f41-5985-8759-9f3dc1b0efcc"));
        UUID id = Ids.entryId("fulfil", "order-42", 0, "charge");
        assertThat(id.version()).isEqualTo(5);
        assertThat(id.variant()).isEqualTo(2);
    }

    @Test
    void entries_of_ids_with_a_colon_never_share_an_id_with_another_instances_entry() {
        // the frozen form would give both "waymark:workflow:w:x:1:0:s"
        assertThat(Ids.entryId("w", "x:1", 0, "s")).isNotEqualTo(Ids.entryId("w", "x", 1, "0:s"));
        assertThat(Ids.entryId("w", "a:b", 0, "c")).isNotEqualTo(Ids.entryId("w", "a", 0, "b:c"));
        assertThat(Ids.entryId("w", "x:1", 0, "s"))
                .isEqualTo(Ids.uuid5(Ids.NAMESPACE_URL, "waymark:workflow2:w:3:x:1:0:s"))
                .isEqualTo(Ids.entryId("w", "x:1", 0, "s"));
    }

    @Test
    void journal_streams_are_named_per_generation() {
        assertThat(Ids.stream("fulfil", "order-42", 0)).isEqualTo("$wf-fulfil-order-42");
        assertThat(Ids.stream("fulfil", "order-42", 7)).isEqualTo("$wf-fulfil-order-42#7");
    }
}
