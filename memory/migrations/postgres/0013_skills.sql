-- Skills: named procedures an agent follows for one kind of task, learned
-- from people's corrections and put in force only by an administrator.
-- Nothing here can name a tool, a role or a permission: a skill grants nothing.
CREATE TABLE skills (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    org TEXT NOT NULL,
    agent TEXT NOT NULL,
    -- Agent Skills rules: at most 64 of a-z, 0-9 and '-'.
    slug TEXT NOT NULL,
    -- The revision in force (a `skill_revisions.id`), 0 when none is.
    active_id BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    UNIQUE (org, agent, slug)
);
-- Immutable revisions: a change is a new row; only `status`, the approval
-- and `note` move.
CREATE TABLE skill_revisions (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    org TEXT NOT NULL,
    skill_id BIGINT NOT NULL,
    rev BIGINT NOT NULL,
    description TEXT NOT NULL,
    body TEXT NOT NULL,
    -- SHA-256 (hex) of the description and body: an approval names it.
    hash TEXT NOT NULL,
    -- proposed | active | suspended | rejected | retired
    status TEXT NOT NULL,
    -- The revision in force when this one was proposed (0: none); an
    -- approval is refused when another is in force by then.
    base_id BIGINT NOT NULL,
    -- Ids of the messages it came from, comma-separated.
    evidence TEXT NOT NULL,
    proposed_by TEXT NOT NULL,
    approved_by TEXT,
    approved_at BIGINT,
    -- Why it was suspended, rejected or set aside ('' when not).
    note TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    UNIQUE (skill_id, rev)
);
CREATE INDEX skill_revisions_by_status ON skill_revisions (org, status, skill_id);
-- People's corrections of the assistant's previous answer: the evidence.
CREATE TABLE skill_corrections (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    org TEXT NOT NULL,
    agent TEXT NOT NULL,
    conversation TEXT NOT NULL,
    -- The correcting line, and the request the corrected answer answered.
    message_id BIGINT NOT NULL,
    task_message_id BIGINT NOT NULL,
    sender TEXT NOT NULL,
    task TEXT NOT NULL,
    -- The rule the correction states, as a step ("Leave refunds out").
    rule TEXT NOT NULL,
    -- The skill revision the corrected answer used (0: none).
    used_id BIGINT NOT NULL DEFAULT 0,
    -- The proposal it went into (0: not yet).
    revision_id BIGINT NOT NULL DEFAULT 0,
    at BIGINT NOT NULL,
    UNIQUE (org, message_id)
);
CREATE INDEX skill_corrections_by_agent ON skill_corrections (org, agent, at);
-- Which revisions each turn used (by the turn's message id).
CREATE TABLE skill_uses (
    org TEXT NOT NULL,
    message_id BIGINT NOT NULL,
    revision_id BIGINT NOT NULL,
    at BIGINT NOT NULL,
    PRIMARY KEY (org, message_id, revision_id)
);
-- One counter per agent, moved in the transaction of every change of what
-- is in force: a process keeps the active skills and reads only this to know
-- whether they are still current.
CREATE TABLE skill_generations (
    org TEXT NOT NULL,
    agent TEXT NOT NULL,
    generation BIGINT NOT NULL,
    PRIMARY KEY (org, agent)
);
