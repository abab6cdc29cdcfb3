-- Distillation (the distill job, `src/jobs/distill/`): candidate semantic memories drafted from
-- clusters of episodes, waiting for a reviewer.
CREATE TABLE candidates (
    id              UUID        PRIMARY KEY,
    namespace       TEXT        NOT NULL,
    content         TEXT        NOT NULL,
    entity          TEXT,
    attribute       TEXT,
    confidence      DOUBLE PRECISION NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
    -- the episodes it rests on (a JSON array of ids); grows when later evidence is attached
    source_ids      JSONB       NOT NULL,
    fingerprint     TEXT        NOT NULL,
    method          TEXT        NOT NULL CHECK (method IN ('llm', 'extractive')),
    model           TEXT,
    prompt_version  TEXT,
    status          TEXT        NOT NULL DEFAULT 'pending'
                                CHECK (status IN ('pending', 'approved', 'rejected')),
    reviewer        TEXT,
    reviewed_at     TIMESTAMPTZ,
    note            TEXT,
    -- the semantic memory an approval wrote
    memory_id       UUID,
    created_at      TIMESTAMPTZ NOT NULL,
    updated_at      TIMESTAMPTZ NOT NULL,
    -- for the dedup against later candidates (same embedder as the memories)
    embedding       REAL[]      NOT NULL
);
CREATE INDEX candidates_review ON candidates (namespace, status, created_at);

-- Clusters already distilled, by fingerprint (a hash of their sorted episode ids): never sent
-- to the LLM again, whatever became of their candidates. (A cluster that failed is not recorded:
-- the next run tries it again.)
CREATE TABLE distilled_clusters (
    fingerprint  TEXT        PRIMARY KEY,
    namespace    TEXT        NOT NULL,
    outcome      TEXT        NOT NULL CHECK (outcome IN ('created', 'merged', 'nothing')),
    created_at   TIMESTAMPTZ NOT NULL
);

-- Episodes a run has distilled (the `distilled_at` mark): reruns skip them, a killed run
-- resumes with the rest. Written in the same transaction as the cluster's candidates.
CREATE TABLE distilled_episodes (
    id            UUID        PRIMARY KEY,
    fingerprint   TEXT        NOT NULL,
    distilled_at  TIMESTAMPTZ NOT NULL
);
