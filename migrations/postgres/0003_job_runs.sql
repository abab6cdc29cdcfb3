-- The maintenance jobs' run ledger. One row per (job, scheduled tick): the INSERT that claims a
-- tick can succeed only once, so replicas sharing a database never run one tick twice (the
-- per-tick claim of graphile-worker / Kubernetes CronJob).
CREATE TABLE job_runs (
    id            BIGSERIAL   PRIMARY KEY,
    job           TEXT        NOT NULL,
    scheduled_for TIMESTAMPTZ NOT NULL,
    node          TEXT        NOT NULL,
    status        TEXT        NOT NULL CHECK (status IN ('running', 'ok', 'failed', 'interrupted')),
    started_at    TIMESTAMPTZ NOT NULL,
    finished_at   TIMESTAMPTZ,
    stats         JSONB       NOT NULL DEFAULT '{}',
    error         TEXT,
    UNIQUE (job, scheduled_for)
);
CREATE INDEX job_runs_by_start ON job_runs (job, started_at);
CREATE INDEX job_runs_running ON job_runs (node) WHERE status = 'running';
