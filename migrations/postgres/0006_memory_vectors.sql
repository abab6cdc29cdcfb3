-- Embeddings live beside the rows, not in them. A 384-d REAL[] is ~1.5 kB, four fifths of a
-- row: kept in `memories`, every archive move, update and vacuum of the hot table copied it
-- (the archive job moved ~2 kB a row and was bound by the WAL that wrote). Here a row's vector
-- stays put for its whole life, whichever table (`memories` or `memories_archive`) holds the
-- row; the archive move copies only the ~300 B of metadata.
--
-- Invariant: every row of `memories` and `memories_archive` has exactly one row here, and
-- nothing else does. Inserts write both in one statement; a hard forget and an object export
-- delete both in one transaction.
CREATE TABLE memory_vectors (
    id         UUID   PRIMARY KEY,
    embedding  REAL[] NOT NULL
);
INSERT INTO memory_vectors (id, embedding) SELECT id, embedding FROM memories;
INSERT INTO memory_vectors (id, embedding) SELECT id, embedding FROM memories_archive
    ON CONFLICT (id) DO NOTHING;
ALTER TABLE memories DROP COLUMN embedding;
ALTER TABLE memories_archive DROP COLUMN embedding;
