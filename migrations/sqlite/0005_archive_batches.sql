-- The archive job's object sink journal. A batch is first moved into memories_archive and
-- recorded here as 'staged' in one transaction; its object is then written under `key`,
-- verified, and only then are its rows deleted from memories_archive and the batch marked
-- 'exported'. A crash anywhere leaves a staged batch that the next run exports again under the
-- same key, so every row ends up in exactly one place. `ids` (a JSON array) lets a restore by
-- id find its object.
CREATE TABLE archive_batches (
    key          TEXT    PRIMARY KEY,
    namespace    TEXT    NOT NULL,
    ids          TEXT    NOT NULL,
    state        TEXT    NOT NULL CHECK (state IN ('staged', 'exported', 'restored')),
    row_count    BIGINT  NOT NULL,
    created_at   INTEGER NOT NULL,
    exported_at  INTEGER
);
CREATE INDEX archive_batches_state ON archive_batches (state, created_at);
