-- Writes the screen held for a reviewer (a rule with action = "quarantine"): the write as it
-- was asked for, never in `memories`, so no search or index can return it until a reviewer
-- approves it (then it goes through the write path) or rejects it.
CREATE TABLE quarantine (
    id TEXT PRIMARY KEY,
    namespace TEXT NOT NULL,
    rule TEXT NOT NULL,
    kind TEXT NOT NULL,
    request TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending',
    reviewer TEXT,
    reviewed_at INTEGER,
    note TEXT,
    memory_id TEXT
);
CREATE INDEX quarantine_pending ON quarantine (namespace, created_at) WHERE status = 'pending';
