-- Event time: when what a memory tells of happened, as the writer says (`occurred_at`), kept
-- apart from when hindsight stored it (`created_at`). Recency and a search's time range use it;
-- an agent importing history sets it. Rows written before it existed happened when they were
-- stored.
ALTER TABLE memories ADD COLUMN occurred_at TIMESTAMPTZ;
UPDATE memories SET occurred_at = created_at;
ALTER TABLE memories ALTER COLUMN occurred_at SET NOT NULL;
ALTER TABLE memories_archive ADD COLUMN occurred_at TIMESTAMPTZ;
UPDATE memories_archive SET occurred_at = created_at;
ALTER TABLE memories_archive ALTER COLUMN occurred_at SET NOT NULL;
-- A search's time range within one namespace.
CREATE INDEX memories_occurred ON memories (namespace, occurred_at);
