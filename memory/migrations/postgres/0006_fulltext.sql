-- Retrieval moves from the hand-written word index (memory_terms) to
-- PostgreSQL's own full-text search: a tsvector per ACTIVE record with a GIN
-- index, ranked by ts_rank_cd. The lexemes are the analyzer's output
-- (memory::fulltext: stems, identifier parts, CJK bigrams) given as a
-- tsvector literal, so both engines index the same tokens. The document also
-- holds one lexeme naming the organisation and visibility key the record is
-- read under, so the scope is part of the match.
DROP TABLE memory_terms;
-- `rowid` is the record id, named as SQLite's FTS5 names it, so the statements
-- that drop a record's row are the same on both engines.
CREATE TABLE memory_fts (
    rowid BIGINT PRIMARY KEY,
    doc TSVECTOR NOT NULL
);
CREATE INDEX memory_fts_doc ON memory_fts USING GIN (doc);
-- Active records the Rust side indexes at connect (`Db::index_pending`).
CREATE TABLE memory_fts_pending (record_id BIGINT PRIMARY KEY, org TEXT NOT NULL);
INSERT INTO memory_fts_pending SELECT id, org FROM memory_records WHERE status = 'active';
-- How the speaker wants to be served is read every turn: by owner and kind, newest first.
CREATE INDEX memory_records_by_owner_kind ON memory_records (org, owner, kind, status, said_at);
