-- Tokens an operator created for agents: only the SHA-256 of the secret is kept. A revoked
-- token keeps its row (who held what, for the audit); its name can be given again.
CREATE TABLE tokens (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    hash TEXT NOT NULL UNIQUE,
    grants TEXT NOT NULL,
    operator INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
);
CREATE UNIQUE INDEX tokens_active_name ON tokens (name) WHERE revoked_at IS NULL;
