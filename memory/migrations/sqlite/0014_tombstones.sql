-- Secrets of this store, generated once at first connect (`tombstone`: the
-- key of forgotten records' tombstones). Whoever holds the database holds
-- them; they keep a tombstone from being reversed by guessing without it.
CREATE TABLE store_secrets (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
-- What a forgotten record leaves: keyed digests (HMAC-SHA256 with the
-- `tombstone` secret) of its text and of the message it was learned from,
-- each bound to its place. Its row in memory_records keeps neither subject
-- nor content.
CREATE TABLE memory_tombstones (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    org TEXT NOT NULL,
    owner TEXT,
    record_id BIGINT NOT NULL,
    digest TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX memory_tombstones_by_digest ON memory_tombstones (org, digest);
CREATE INDEX memory_tombstones_by_owner ON memory_tombstones (org, owner);
