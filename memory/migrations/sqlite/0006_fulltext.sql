-- Retrieval moves from the hand-written word index (memory_terms) to SQLite's
-- own full-text engine: FTS5 with BM25. Rows hold ACTIVE records only, keyed
-- by record id (rowid). `tokens` is the analyzer's output (memory::fulltext:
-- stems, identifier parts, CJK bigrams), space-separated, so the `ascii`
-- tokenizer only splits on the spaces and keeps every token as written.
-- `vis` holds one token naming the organisation and visibility key the record
-- is read under, so the scope is part of the MATCH and a search reads only
-- what its scope may see.
DROP TABLE memory_terms;
CREATE VIRTUAL TABLE memory_fts USING fts5(
    tokens,
    vis,
    tokenize = "ascii tokenchars '_-.'"
);
-- Active records the Rust side indexes at connect (`Db::index_pending`):
-- the analyzer is Rust, so a migration can only say what needs indexing.
CREATE TABLE memory_fts_pending (record_id BIGINT PRIMARY KEY, org TEXT NOT NULL);
INSERT INTO memory_fts_pending SELECT id, org FROM memory_records WHERE status = 'active';
-- How the speaker wants to be served is read every turn: by owner and kind, newest first.
CREATE INDEX memory_records_by_owner_kind ON memory_records (org, owner, kind, status, said_at);
