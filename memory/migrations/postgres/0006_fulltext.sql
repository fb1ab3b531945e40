-- Retrieval moves from the hand-written word index (memory_terms) to
-- PostgreSQL's own full-text search: a tsvector per ACTIVE record with a GIN
-- index, ranked by ts_rank_cd. The lexemes are the analyzer's output
-- (memory::fulltext: stems, identifier parts, CJK bigrams) given as a
-- tsvector literal, so both engines index the same tokens. `org` and `vis`
-- (the visibility key the record is read under) filter the rows the words
-- matched. `rowid` is the record id, named as SQLite's FTS5 names it, so the
-- statements that drop a record's row are the same on both engines.
DROP TABLE memory_terms;
CREATE TABLE memory_fts (
    rowid BIGINT PRIMARY KEY,
    org TEXT NOT NULL,
    vis TEXT NOT NULL,
    doc TSVECTOR NOT NULL
);
CREATE INDEX memory_fts_doc ON memory_fts USING GIN (doc);
-- Tokens so common that ranking by them would read a large share of the
-- store: a search leaves them out when it has rarer ones. Refreshed by
-- `Db::optimize` (the hourly job) from ts_stat.
CREATE TABLE memory_fts_common (token TEXT PRIMARY KEY, docs BIGINT NOT NULL);
-- Active records the Rust side indexes at connect (`Db::index_pending`).
CREATE TABLE memory_fts_pending (record_id BIGINT PRIMARY KEY, org TEXT NOT NULL);
INSERT INTO memory_fts_pending SELECT id, org FROM memory_records WHERE status = 'active';
-- How the speaker wants to be served is read every turn: by owner and kind, newest first.
CREATE INDEX memory_records_by_owner_kind ON memory_records (org, owner, kind, status, said_at);
