-- steward schema, PostgreSQL dialect. Every table is keyed by organisation; memory also by agent.
-- Times are milliseconds since the Unix epoch.
CREATE TABLE users (
    org TEXT NOT NULL,
    user_id TEXT NOT NULL,
    name TEXT NOT NULL,
    role TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'active',
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (org, user_id)
);
CREATE TABLE identities (
    org TEXT NOT NULL,
    stored_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (org, stored_id)
);
CREATE TABLE pairing_codes (
    org TEXT NOT NULL,
    code TEXT NOT NULL,
    channel TEXT NOT NULL,
    stored_id TEXT NOT NULL,
    name TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    decided_by TEXT,
    decided_at BIGINT,
    role TEXT,
    PRIMARY KEY (org, code)
);
CREATE INDEX pairing_codes_by_channel ON pairing_codes (org, channel, status);
CREATE TABLE pairing_hints (
    org TEXT NOT NULL,
    stored_id TEXT NOT NULL,
    last_hint_at BIGINT NOT NULL,
    PRIMARY KEY (org, stored_id)
);
CREATE TABLE api_keys (
    key_hash TEXT PRIMARY KEY,
    org TEXT NOT NULL,
    user_id TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE TABLE seen_messages (
    org TEXT NOT NULL,
    channel TEXT NOT NULL,
    platform_id TEXT NOT NULL,
    seen_at BIGINT NOT NULL,
    PRIMARY KEY (org, channel, platform_id)
);
CREATE TABLE messages (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    org TEXT NOT NULL,
    agent TEXT NOT NULL,
    channel TEXT NOT NULL,
    conversation TEXT NOT NULL,
    conversation_kind TEXT NOT NULL,
    author TEXT NOT NULL,
    sender TEXT,
    sender_role TEXT,
    text TEXT NOT NULL,
    said_at BIGINT NOT NULL,
    trimmed BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX messages_by_conversation ON messages (org, agent, conversation, id);
CREATE TABLE memory_records (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    org TEXT NOT NULL,
    agent TEXT NOT NULL,
    scope TEXT NOT NULL,
    owner TEXT,
    subject TEXT NOT NULL,
    kind TEXT NOT NULL,
    content TEXT NOT NULL,
    status TEXT NOT NULL,
    source TEXT NOT NULL,
    said_at BIGINT NOT NULL,
    recorded_at BIGINT NOT NULL,
    expires_at BIGINT,
    conversation TEXT,
    batch BIGINT,
    author TEXT
);
CREATE INDEX memory_records_by_subject ON memory_records (org, agent, scope, subject, status);
CREATE INDEX memory_records_by_owner ON memory_records (org, owner, status);
CREATE INDEX memory_records_by_status ON memory_records (org, agent, status, scope);
-- Posting lists of ACTIVE records only, per visibility key
-- (org | agent:<agent> | user:<agent>:<owner> | person:<owner>), so a read
-- walks only what its scope may see, and each walk is bounded.
CREATE TABLE memory_terms (
    org TEXT NOT NULL,
    vis TEXT NOT NULL,
    term TEXT NOT NULL,
    record_id BIGINT NOT NULL,
    PRIMARY KEY (org, vis, term, record_id)
);
CREATE INDEX memory_terms_by_record ON memory_terms (record_id);
CREATE TABLE memory_revisions (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    org TEXT NOT NULL,
    agent TEXT NOT NULL,
    retired_id BIGINT NOT NULL,
    replacing_id BIGINT NOT NULL,
    reason TEXT NOT NULL,
    via TEXT NOT NULL,
    cause TEXT NOT NULL,
    run_id TEXT NOT NULL,
    model TEXT,
    prompt_version TEXT,
    created_at BIGINT NOT NULL,
    undone_at BIGINT,
    undone_by TEXT
);
CREATE INDEX memory_revisions_by_pair ON memory_revisions (org, retired_id, replacing_id);
CREATE INDEX memory_revisions_by_run ON memory_revisions (org, run_id);
CREATE TABLE audit_log (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    org TEXT NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT NOT NULL,
    detail TEXT NOT NULL,
    at BIGINT NOT NULL
);
CREATE INDEX audit_log_by_org ON audit_log (org, id);
