-- One-time dashboard sign-in links that `/web` sends a paired person in a
-- direct message: only the token's hash is kept. A link is spent once
-- (`used_at`), and is refused after `expires_at`.
CREATE TABLE sign_in_links (
    token_hash TEXT PRIMARY KEY,
    org TEXT NOT NULL,
    user_id TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at BIGINT
);
