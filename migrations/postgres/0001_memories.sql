-- Memories: the source of truth. The vector index is derived from these rows and can be rebuilt
-- from them at any time (`hindsight reindex`). Same columns and rules as migrations/sqlite, in
-- PostgreSQL's own types.
CREATE TABLE memories (
    id               UUID             PRIMARY KEY,
    namespace        TEXT             NOT NULL,
    memory_type      TEXT             NOT NULL CHECK (memory_type IN ('working', 'episodic', 'semantic')),
    content          TEXT             NOT NULL,
    importance       DOUBLE PRECISION NOT NULL CHECK (importance >= 0 AND importance <= 1),
    status           TEXT             NOT NULL DEFAULT 'active'
                                      CHECK (status IN ('active', 'deprecated', 'expired', 'forgotten')),
    entity           TEXT,
    attribute        TEXT,
    source           JSONB            NOT NULL DEFAULT 'null',
    merged_sources   JSONB            NOT NULL DEFAULT '[]',
    metadata         JSONB            NOT NULL DEFAULT '{}',
    created_at       TIMESTAMPTZ      NOT NULL,
    updated_at       TIMESTAMPTZ      NOT NULL,
    expires_at       TIMESTAMPTZ,
    last_accessed_at TIMESTAMPTZ,
    access_count     BIGINT           NOT NULL DEFAULT 0,
    deprecated_at    TIMESTAMPTZ,
    deprecated_by    UUID,
    embedding_model  TEXT             NOT NULL,
    -- kept so the index can be rebuilt without re-embedding
    embedding        REAL[]           NOT NULL,
    -- TRUE while the vector index may not reflect this row yet (set in the same transaction as
    -- the row change, cleared after the index flushed). Start-up repairs these.
    index_pending    BOOLEAN          NOT NULL DEFAULT TRUE
);

CREATE INDEX memories_scope ON memories (namespace, memory_type, status);
CREATE INDEX memories_created ON memories (namespace, created_at);
CREATE INDEX memories_index_pending ON memories (id) WHERE index_pending;
CREATE INDEX memories_expires ON memories (expires_at) WHERE status = 'active' AND expires_at IS NOT NULL;
-- At most one active fact per (namespace, entity, attribute): a newer one supersedes the older.
CREATE UNIQUE INDEX memories_active_fact ON memories (namespace, entity, attribute)
    WHERE status = 'active' AND entity IS NOT NULL AND attribute IS NOT NULL;

-- Small key/value facts about the data set, e.g. which embedder the index was built with.
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
