-- A hard forget deletes the rows, and with them the `index_pending` flag that would have
-- carried the index delete through a crash or a failed call: the private vector could stay in
-- the index. The tombstone carries it instead: set in the forget's transaction for every id
-- that had a hot row (and so a point), cleared once the index has flushed the delete;
-- `repair_index` deletes what is still pending.
ALTER TABLE forgotten ADD COLUMN index_delete_pending INTEGER NOT NULL DEFAULT 0;
CREATE INDEX forgotten_index_delete_pending ON forgotten (id) WHERE index_delete_pending = 1;
