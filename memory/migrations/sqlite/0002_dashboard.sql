-- The web dashboard's sign-in state, shared by every replica.
-- The generated admin token: its SHA-256 only (the token is printed once, never stored).
CREATE TABLE dashboard_tokens (
    org TEXT NOT NULL PRIMARY KEY,
    token_hash TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
-- Signed-in browsers. `id_hash` is the SHA-256 of the session cookie; `token_hash`
-- is the admin token the session signed in with, so a new token ends old sessions.
CREATE TABLE dashboard_sessions (
    id_hash TEXT NOT NULL PRIMARY KEY,
    org TEXT NOT NULL,
    csrf TEXT NOT NULL,
    token_hash TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX dashboard_sessions_by_org ON dashboard_sessions (org, expires_at);
