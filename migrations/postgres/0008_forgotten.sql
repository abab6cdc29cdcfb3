-- A forget reaches every copy of a memory, and nothing brings a forgotten memory back.
--
-- forgotten: a tombstone for every forgotten id — the id, how it was forgotten and when, no
-- content. `hindsight archive restore` skips tombstoned ids, so neither an archived row nor an
-- exported object's copy comes back; `hindsight archive purge` (and the archive job) rewrites
-- the exported objects that still hold a hard-forgotten id.
CREATE TABLE forgotten (
    id            UUID        PRIMARY KEY,
    mode          TEXT        NOT NULL CHECK (mode IN ('soft', 'hard')),
    forgotten_at  TIMESTAMPTZ NOT NULL
);
INSERT INTO forgotten (id, mode, forgotten_at)
    SELECT id, 'soft', updated_at FROM memories WHERE status = 'forgotten';

-- archive_exported: what each exported archive object holds, as much as a forget's filter asks
-- (namespace, type, entity, created_at), so a forget finds the copies without reading objects.
-- Written with the export; a row goes when a purge rewrites its object without it (a hard
-- forget leaves it, so the purge knows which objects to rewrite).
-- Objects exported before this migration are known by id and namespace only (their journal
-- has no more): a forget by id or by namespace alone reaches them, a narrower filter does not.
CREATE TABLE archive_exported (
    batch_key    TEXT        NOT NULL,
    id           UUID        NOT NULL,
    namespace    TEXT        NOT NULL,
    memory_type  TEXT,
    entity       TEXT,
    created_at   TIMESTAMPTZ,
    PRIMARY KEY (batch_key, id)
);
CREATE INDEX archive_exported_id ON archive_exported (id);
CREATE INDEX archive_exported_namespace ON archive_exported (namespace, created_at);
INSERT INTO archive_exported (batch_key, id, namespace)
    SELECT b.key, j.id::uuid, b.namespace
    FROM archive_batches AS b, jsonb_array_elements_text(b.ids) AS j(id)
    WHERE b.state IN ('exported', 'restored');
