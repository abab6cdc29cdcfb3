-- Event time: when what a memory tells of happened, as the writer says (`occurred_at`), kept
-- apart from when hindsight stored it (`created_at`). Recency and a search's time range use it;
-- an agent importing history sets it. Rows written before it existed happened when they were
-- stored. Unix milliseconds, like every timestamp here.
--
-- SQLite adds a NOT NULL column only with a default: every writer binds the column, and the
-- UPDATE gives the existing rows theirs, so the 0 is never what a row holds.
ALTER TABLE memories ADD COLUMN occurred_at INTEGER NOT NULL DEFAULT 0;
UPDATE memories SET occurred_at = created_at;
ALTER TABLE memories_archive ADD COLUMN occurred_at INTEGER NOT NULL DEFAULT 0;
UPDATE memories_archive SET occurred_at = created_at;
-- A search's time range within one namespace.
CREATE INDEX memories_occurred ON memories (namespace, occurred_at);
