-- Writes the screen held for a reviewer (a rule with action = "quarantine"): the write as it
-- was asked for, never in `memories`, so no search or index can return it until a reviewer
-- approves it (then it goes through the write path) or rejects it.
CREATE TABLE quarantine (
    id UUID PRIMARY KEY,
    namespace TEXT NOT NULL,
    rule TEXT NOT NULL,
    kind TEXT NOT NULL,
    request JSONB NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected')),
    reviewer TEXT,
    reviewed_at TIMESTAMPTZ,
    note TEXT,
    memory_id UUID
);
CREATE INDEX quarantine_pending ON quarantine (namespace, created_at) WHERE status = 'pending';
