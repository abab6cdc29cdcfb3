-- Maintenance jobs, part two.
--
-- job_runs.heartbeat_at: a running job refreshes it every few seconds, so a run whose process
-- died (kill -9, power loss) is recognised by its stale heartbeat and marked `interrupted`,
-- whichever replica notices.
ALTER TABLE job_runs ADD COLUMN heartbeat_at TIMESTAMPTZ;
UPDATE job_runs SET heartbeat_at = started_at;
DROP INDEX job_runs_running;
CREATE INDEX job_runs_running ON job_runs (heartbeat_at) WHERE status = 'running';

-- The archive job's table sink: cold rows moved out of `memories` (and out of the vector
-- index and the full-text index) with every column kept, so `hindsight archive restore` puts
-- them back exactly. `status` is 'archived'; `archived_at` is when the row left.
CREATE TABLE memories_archive (
    id               UUID             PRIMARY KEY,
    namespace        TEXT             NOT NULL,
    memory_type      TEXT             NOT NULL,
    content          TEXT             NOT NULL,
    importance       DOUBLE PRECISION NOT NULL,
    status           TEXT             NOT NULL,
    entity           TEXT,
    attribute        TEXT,
    source           JSONB            NOT NULL,
    merged_sources   JSONB            NOT NULL,
    metadata         JSONB            NOT NULL,
    created_at       TIMESTAMPTZ      NOT NULL,
    updated_at       TIMESTAMPTZ      NOT NULL,
    expires_at       TIMESTAMPTZ,
    last_accessed_at TIMESTAMPTZ,
    access_count     BIGINT           NOT NULL,
    deprecated_at    TIMESTAMPTZ,
    deprecated_by    UUID,
    embedding_model  TEXT             NOT NULL,
    embedding        REAL[]           NOT NULL,
    lexical          TEXT,
    archived_at      TIMESTAMPTZ      NOT NULL
);
CREATE INDEX memories_archive_namespace ON memories_archive (namespace, archived_at);

-- Where the archive job looks: active rows, oldest first. The id breaks ties as the jobs
-- order them, so a batch is a range scan of the index, never a sort of every candidate.
CREATE INDEX memories_cold ON memories (created_at, id) WHERE status = 'active';
-- The expire job's order, likewise.
DROP INDEX memories_expires;
CREATE INDEX memories_expires ON memories (expires_at, id)
    WHERE status = 'active' AND expires_at IS NOT NULL;
