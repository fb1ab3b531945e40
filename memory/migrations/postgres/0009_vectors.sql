-- Optional embeddings ([embeddings] in the gateway's configuration): one
-- vector per ACTIVE record and model, with the place it is read under (org,
-- visibility key), as memory_fts has it. A record that stops being active
-- (retired, forgotten, erased) loses its vector in the same transaction.
-- The vector itself is a pgvector column (`embedding vector`), added at
-- connect when embeddings are on (`Db::enable_vectors`): a server without
-- the extension runs every other part of steward without it.
CREATE TABLE memory_vectors (
    record_id BIGINT PRIMARY KEY REFERENCES memory_records (id) ON DELETE CASCADE,
    org TEXT NOT NULL,
    vis TEXT NOT NULL,
    model TEXT NOT NULL,
    dims INTEGER NOT NULL
);
CREATE INDEX memory_vectors_by_place ON memory_vectors (org, model, vis);
