-- A person's work roles (`analyst`, `sre`, …), apart from their authority
-- (admin/user): set by administrators, audited.
CREATE TABLE user_roles (
    org TEXT NOT NULL,
    user_id TEXT NOT NULL,
    role TEXT NOT NULL,
    granted_by TEXT NOT NULL,
    granted_at BIGINT NOT NULL,
    PRIMARY KEY (org, user_id, role)
);
CREATE INDEX user_roles_by_role ON user_roles (org, role);
-- Permissions held for one role (`role_memory.manage`), granted by administrators.
CREATE TABLE role_grants (
    org TEXT NOT NULL,
    user_id TEXT NOT NULL,
    role TEXT NOT NULL,
    permission TEXT NOT NULL,
    granted_by TEXT NOT NULL,
    granted_at BIGINT NOT NULL,
    PRIMARY KEY (org, user_id, role, permission)
);
-- Proposals to a role's shared memory and their two-party curation:
-- proposed -> accepted (a manager of the role) -> confirmed (a different,
-- current holder of the role), each decision bound to the content hash.
-- A confirmed proposal names the active record it became.
CREATE TABLE role_proposals (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    org TEXT NOT NULL,
    role TEXT NOT NULL,
    -- rubric | term | lesson
    kind TEXT NOT NULL,
    content TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    -- proposed | accepted | confirmed | expired
    status TEXT NOT NULL,
    proposed_by TEXT NOT NULL,
    on_behalf_of TEXT,
    source_record BIGINT,
    proposed_at BIGINT NOT NULL,
    accepted_by TEXT,
    accepted_hash TEXT,
    accepted_at BIGINT,
    confirmed_by TEXT,
    confirmed_at BIGINT,
    record_id BIGINT
);
CREATE INDEX role_proposals_by_role ON role_proposals (org, role, id);
