-- Maintenance jobs, part two.
--
-- job_runs.heartbeat_at: a running job refreshes it every few seconds, so a run whose process
-- died (kill -9, power loss) is recognised by its stale heartbeat and marked `interrupted`,
-- whichever node notices. Unix milliseconds.
ALTER TABLE job_runs ADD COLUMN heartbeat_at INTEGER;
UPDATE job_runs SET heartbeat_at = started_at;
DROP INDEX job_runs_running;
CREATE INDEX job_runs_running ON job_runs (heartbeat_at) WHERE status = 'running';

-- The archive job's table sink: cold rows moved out of `memories` (and out of the vector
-- index and the full-text index) with every column kept, so `hindsight archive restore` puts
-- them back exactly. `status` is 'archived'; `archived_at` is when the row left.
CREATE TABLE memories_archive (
    id               TEXT    PRIMARY KEY,
    namespace        TEXT    NOT NULL,
    memory_type      TEXT    NOT NULL,
    content          TEXT    NOT NULL,
    importance       REAL    NOT NULL,
    status           TEXT    NOT NULL,
    entity           TEXT,
    attribute        TEXT,
    source           TEXT    NOT NULL,
    merged_sources   TEXT    NOT NULL,
    metadata         TEXT    NOT NULL,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    expires_at       INTEGER,
    last_accessed_at INTEGER,
    access_count     INTEGER NOT NULL,
    deprecated_at    INTEGER,
    deprecated_by    TEXT,
    embedding_model  TEXT    NOT NULL,
    embedding        BLOB    NOT NULL,
    lexical          TEXT,
    archived_at      INTEGER NOT NULL
);
CREATE INDEX memories_archive_namespace ON memories_archive (namespace, archived_at);

-- Where the archive job looks: active rows, oldest first. The id breaks ties as the jobs
-- order them, so a batch is a range scan of the index, never a sort of every candidate.
CREATE INDEX memories_cold ON memories (created_at, id) WHERE status = 'active';
-- The expire job's order, likewise.
DROP INDEX memories_expires;
CREATE INDEX memories_expires ON memories (expires_at, id)
    WHERE status = 'active' AND expires_at IS NOT NULL;
