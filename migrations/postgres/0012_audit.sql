-- Who did what, and when: every write, forget, review decision and token change, by the
-- caller's name (a token's, or the operator's). Ids and outcomes only, never memory content.
-- Kept for the expire job's `audit_retention_days`.
CREATE TABLE audit (
    id BIGSERIAL PRIMARY KEY,
    at TIMESTAMPTZ NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    namespace TEXT,
    ids JSONB NOT NULL,
    outcome TEXT NOT NULL,
    detail TEXT
);
CREATE INDEX audit_at ON audit (at);
