-- Session archives: one row per trimmed slice. Its lines stay in `messages`
-- (trimmed = archive id), each with its sender id and the role it was sent with.
CREATE TABLE archives (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    org TEXT NOT NULL,
    agent TEXT NOT NULL,
    channel TEXT NOT NULL,
    conversation TEXT NOT NULL,
    conversation_kind TEXT NOT NULL,
    started_at BIGINT NOT NULL,
    ended_at BIGINT NOT NULL,
    trust TEXT NOT NULL,
    summary TEXT NOT NULL,
    markdown TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    created_by TEXT NOT NULL
);
CREATE INDEX archives_by_conversation ON archives (org, agent, conversation, id);
CREATE INDEX messages_by_archive ON messages (org, trimmed);

-- Scheduled jobs: one row per (job, slot); the replica whose insert wins runs that slot.
CREATE TABLE job_runs (
    job TEXT NOT NULL,
    slot BIGINT NOT NULL,
    claimed_at BIGINT NOT NULL,
    PRIMARY KEY (job, slot)
);
