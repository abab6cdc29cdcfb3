-- Distillation (the distill job, `src/jobs/distill/`): candidate semantic memories drafted from
-- clusters of episodes, waiting for a reviewer. Times are unix milliseconds.
CREATE TABLE candidates (
    id              TEXT    PRIMARY KEY,
    namespace       TEXT    NOT NULL,
    content         TEXT    NOT NULL,
    entity          TEXT,
    attribute       TEXT,
    confidence      REAL    NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
    -- the episodes it rests on (a JSON array of ids); grows when later evidence is attached
    source_ids      TEXT    NOT NULL,
    fingerprint     TEXT    NOT NULL,
    method          TEXT    NOT NULL CHECK (method IN ('llm', 'extractive')),
    model           TEXT,
    prompt_version  TEXT,
    status          TEXT    NOT NULL DEFAULT 'pending'
                            CHECK (status IN ('pending', 'approved', 'rejected')),
    reviewer        TEXT,
    reviewed_at     INTEGER,
    note            TEXT,
    -- the semantic memory its approval wrote
    memory_id       TEXT,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    -- little-endian f32s, for the dedup against later drafts (same embedder as the memories)
    embedding       BLOB    NOT NULL
);
CREATE INDEX candidates_review ON candidates (namespace, status, created_at);

-- Clusters already distilled, by fingerprint (a hash of their sorted episode ids): never sent
-- to the LLM again, whatever became of their candidates. (A cluster that failed is not recorded:
-- the next run tries it again.)
CREATE TABLE distilled_clusters (
    fingerprint  TEXT    PRIMARY KEY,
    namespace    TEXT    NOT NULL,
    outcome      TEXT    NOT NULL CHECK (outcome IN ('created', 'merged', 'nothing')),
    created_at   INTEGER NOT NULL
);

-- Episodes a run has distilled (their `distilled_at` mark): reruns skip them and a killed run
-- resumes with the rest. Written in the same transaction as their cluster's candidates.
CREATE TABLE distilled_episodes (
    id            TEXT    PRIMARY KEY,
    fingerprint   TEXT    NOT NULL,
    distilled_at  INTEGER NOT NULL
);
