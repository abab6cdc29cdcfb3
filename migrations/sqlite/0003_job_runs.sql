-- The maintenance jobs' run ledger. One row per (job, scheduled tick): the INSERT that claims a
-- tick can succeed only once, so replicas sharing a database never run one tick twice (the
-- per-tick claim of graphile-worker / Kubernetes CronJob). Times are unix milliseconds (UTC).
CREATE TABLE job_runs (
    id            INTEGER PRIMARY KEY,
    job           TEXT    NOT NULL,
    scheduled_for INTEGER NOT NULL,
    node          TEXT    NOT NULL,
    status        TEXT    NOT NULL CHECK (status IN ('running', 'ok', 'failed', 'interrupted')),
    started_at    INTEGER NOT NULL,
    finished_at   INTEGER,
    stats         TEXT    NOT NULL DEFAULT '{}',
    error         TEXT,
    UNIQUE (job, scheduled_for)
);
CREATE INDEX job_runs_by_start ON job_runs (job, started_at);
CREATE INDEX job_runs_running ON job_runs (node) WHERE status = 'running';
