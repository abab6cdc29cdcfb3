-- Full-text (lexical) index for hybrid retrieval. `lexical` holds the row's terms as computed by
-- src/lexical.rs (words, and character bigrams for CJK text), NULL until the store fills it in.
-- FTS5 with external content keeps the terms once, in `memories`, and needs a rowid that never
-- changes: VACUUM may renumber an implicit rowid, so the table is rebuilt with an INTEGER
-- PRIMARY KEY (`seq`), the id staying unique as before.
CREATE TABLE memories_new (
    seq              INTEGER PRIMARY KEY,
    id               TEXT    NOT NULL UNIQUE,
    namespace        TEXT    NOT NULL,
    memory_type      TEXT    NOT NULL CHECK (memory_type IN ('working', 'episodic', 'semantic')),
    content          TEXT    NOT NULL,
    importance       REAL    NOT NULL CHECK (importance >= 0 AND importance <= 1),
    status           TEXT    NOT NULL DEFAULT 'active'
                             CHECK (status IN ('active', 'deprecated', 'expired', 'forgotten')),
    entity           TEXT,
    attribute        TEXT,
    source           TEXT    NOT NULL DEFAULT 'null',
    merged_sources   TEXT    NOT NULL DEFAULT '[]',
    metadata         TEXT    NOT NULL DEFAULT '{}',
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    expires_at       INTEGER,
    last_accessed_at INTEGER,
    access_count     INTEGER NOT NULL DEFAULT 0,
    deprecated_at    INTEGER,
    deprecated_by    TEXT,
    embedding_model  TEXT    NOT NULL,
    embedding        BLOB    NOT NULL,
    index_pending    INTEGER NOT NULL DEFAULT 1,
    lexical          TEXT
);

INSERT INTO memories_new (id, namespace, memory_type, content, importance, status, entity,
    attribute, source, merged_sources, metadata, created_at, updated_at, expires_at,
    last_accessed_at, access_count, deprecated_at, deprecated_by, embedding_model, embedding,
    index_pending)
SELECT id, namespace, memory_type, content, importance, status, entity,
    attribute, source, merged_sources, metadata, created_at, updated_at, expires_at,
    last_accessed_at, access_count, deprecated_at, deprecated_by, embedding_model, embedding,
    index_pending
FROM memories ORDER BY id;

DROP TABLE memories;
ALTER TABLE memories_new RENAME TO memories;

CREATE INDEX memories_scope ON memories (namespace, memory_type, status);
CREATE INDEX memories_created ON memories (namespace, created_at);
CREATE INDEX memories_index_pending ON memories (id) WHERE index_pending = 1;
CREATE INDEX memories_expires ON memories (expires_at) WHERE status = 'active' AND expires_at IS NOT NULL;
CREATE UNIQUE INDEX memories_active_fact ON memories (namespace, entity, attribute)
    WHERE status = 'active' AND entity IS NOT NULL AND attribute IS NOT NULL;
CREATE INDEX memories_lexical_missing ON memories (seq) WHERE lexical IS NULL;

CREATE VIRTUAL TABLE memories_fts USING fts5(
    lexical,
    content = 'memories',
    content_rowid = 'seq',
    tokenize = 'unicode61 remove_diacritics 2'
);

-- Keep the index in step with the rows, whatever statement changes them.
CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories
WHEN new.lexical IS NOT NULL BEGIN
    INSERT INTO memories_fts (rowid, lexical) VALUES (new.seq, new.lexical);
END;
CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories
WHEN old.lexical IS NOT NULL BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, lexical) VALUES ('delete', old.seq, old.lexical);
END;
-- One trigger for updates: SQLite fires separate triggers newest first, which would insert the
-- new terms before deleting the old ones (and then delete both).
CREATE TRIGGER memories_fts_update AFTER UPDATE OF lexical ON memories
WHEN old.lexical IS NOT new.lexical BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, lexical)
        SELECT 'delete', old.seq, old.lexical WHERE old.lexical IS NOT NULL;
    INSERT INTO memories_fts (rowid, lexical)
        SELECT new.seq, new.lexical WHERE new.lexical IS NOT NULL;
END;
