-- What a write-mode import (`hindsight import --mode write`) did with each line it passed
-- through the write path: the line's id, the memory it became or merged into (NULL when
-- skipped or held for review), the outcome, when. Running the same import again skips these
-- lines, so it changes nothing. A preserve-mode import needs none of this: its rows keep
-- their ids.
CREATE TABLE imports (
    line_id      UUID        PRIMARY KEY,
    memory_id    UUID,
    outcome      TEXT        NOT NULL,
    imported_at  TIMESTAMPTZ NOT NULL
);
