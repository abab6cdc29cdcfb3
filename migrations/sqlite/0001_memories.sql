-- Memories: the source of truth. The vector index is derived from these rows and can be rebuilt
-- from them at any time (`hindsight reindex`).
-- Timestamps are unix milliseconds (UTC); ids are UUIDv7 text; JSON columns hold JSON text.
CREATE TABLE memories (
    id               TEXT    PRIMARY KEY NOT NULL,
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
    -- little-endian f32 array; kept so the index can be rebuilt without re-embedding
    embedding        BLOB    NOT NULL,
    -- 1 while the vector index may not reflect this row yet (write-ahead flag: set in the same
    -- transaction as the row change, cleared after the index write). Start-up repairs these.
    index_pending    INTEGER NOT NULL DEFAULT 1
);

CREATE INDEX memories_scope ON memories (namespace, memory_type, status);
CREATE INDEX memories_created ON memories (namespace, created_at);
CREATE INDEX memories_index_pending ON memories (id) WHERE index_pending = 1;
CREATE INDEX memories_expires ON memories (expires_at) WHERE status = 'active' AND expires_at IS NOT NULL;
-- At most one active fact per (namespace, entity, attribute): a newer one supersedes the older.
CREATE UNIQUE INDEX memories_active_fact ON memories (namespace, entity, attribute)
    WHERE status = 'active' AND entity IS NOT NULL AND attribute IS NOT NULL;

-- Small key/value facts about the data set, e.g. which embedder the index was built with.
CREATE TABLE meta (
    key   TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
);
