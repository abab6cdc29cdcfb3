-- What a write-mode import (`hindsight import --mode write`) did with each line it passed
-- through the write path: the line's id, the memory it became or merged into (NULL when
-- skipped or held for review), the outcome, when. Running the same import again skips these
-- lines, so it changes nothing. A preserve-mode import needs none of this: its rows keep
-- their ids. Unix milliseconds.
CREATE TABLE imports (
    line_id      TEXT    PRIMARY KEY,
    memory_id    TEXT,
    outcome      TEXT    NOT NULL,
    imported_at  INTEGER NOT NULL
);
