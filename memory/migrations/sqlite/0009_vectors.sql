-- Optional embeddings ([embeddings] in the gateway's configuration): one
-- vector per ACTIVE record and model, as little-endian f32s, with the place
-- it is read under (org, visibility key), as memory_fts has it. A record
-- that stops being active (retired, forgotten, erased) loses its vector in
-- the same transaction. `seq` orders changes, so a process's in-memory copy
-- of the vectors (store/vectors.rs) reads only what changed since it last looked.
CREATE TABLE memory_vectors (
    record_id BIGINT PRIMARY KEY REFERENCES memory_records (id) ON DELETE CASCADE,
    org TEXT NOT NULL,
    vis TEXT NOT NULL,
    model TEXT NOT NULL,
    dims INTEGER NOT NULL,
    vec BLOB NOT NULL,
    seq BIGINT NOT NULL
);
CREATE INDEX memory_vectors_by_seq ON memory_vectors (model, seq);
-- Vectors dropped, by the change that dropped them.
CREATE TABLE memory_vectors_dropped (seq BIGINT PRIMARY KEY, record_id BIGINT NOT NULL);
-- The newest change (insert or drop) of memory_vectors.
CREATE TABLE memory_vectors_seq (id INTEGER PRIMARY KEY CHECK (id = 1), seq BIGINT NOT NULL);
INSERT INTO memory_vectors_seq (id, seq) VALUES (1, 0);
