-- External tools (MCP): each listing of a server's tool exactly as it was
-- shown for approval. A listing never changes; only its status, its
-- approval (roles, confirmation) and `note` move. A changed tool is a new row.
CREATE TABLE external_tools (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    org TEXT NOT NULL,
    agent TEXT NOT NULL,
    server TEXT NOT NULL,
    name TEXT NOT NULL,
    description TEXT NOT NULL,
    input_schema TEXT NOT NULL,
    -- SHA-256 (hex) of server, name, description and schema: an approval names it.
    hash TEXT NOT NULL,
    -- proposed | approved | rejected | suspended
    status TEXT NOT NULL,
    -- What the screen found in the description ('' when nothing).
    finding TEXT NOT NULL DEFAULT '',
    -- The roles it is offered to, comma-separated.
    roles TEXT NOT NULL DEFAULT '',
    -- 1: each call waits for the speaker's yes.
    confirm BIGINT NOT NULL DEFAULT 0,
    decided_by TEXT,
    decided_at BIGINT,
    note TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    UNIQUE (org, agent, server, name, hash)
);
CREATE INDEX external_tools_by_status ON external_tools (org, agent, status);
-- Calls waiting for the speaker's yes: bound to the listing and the exact
-- arguments shown, asked at one message (`batch`).
CREATE TABLE external_tool_calls (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    org TEXT NOT NULL,
    agent TEXT NOT NULL,
    conversation TEXT NOT NULL,
    sender TEXT NOT NULL,
    tool_id BIGINT NOT NULL,
    arguments TEXT NOT NULL,
    arguments_hash TEXT NOT NULL,
    batch BIGINT NOT NULL,
    -- asked | run | declined | lapsed
    status TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX external_tool_calls_waiting ON external_tool_calls (org, agent, conversation, sender, status);
