-- Retrieval moves from the hand-written word index (memory_terms) to SQLite's
-- own full-text engine: FTS5 with BM25. Rows hold ACTIVE records only, keyed
-- by record id (rowid). `tokens` is the analyzer's output (memory::fulltext:
-- stems, identifier parts, CJK bigrams), space-separated, so the `ascii`
-- tokenizer only splits on the spaces and keeps every token as written.
-- `org` and `vis` (the visibility key the record is read under) are stored,
-- not indexed: a search filters the rows its words matched by them.
DROP TABLE memory_terms;
CREATE VIRTUAL TABLE memory_fts USING fts5(
    tokens,
    org UNINDEXED,
    vis UNINDEXED,
    tokenize = "ascii tokenchars '_-.'"
);
-- How many records hold each token (FTS5's own counts), for the refresh of
-- memory_fts_common.
CREATE VIRTUAL TABLE memory_fts_vocab USING fts5vocab(memory_fts, 'col');
-- Tokens so common that ranking by them would read a large share of the
-- store (BM25 counts every row holding a query token): a search leaves them
-- out when it has rarer ones. Refreshed by `Db::optimize` (the hourly job).
CREATE TABLE memory_fts_common (token TEXT PRIMARY KEY, docs BIGINT NOT NULL);
-- Active records the Rust side indexes at connect (`Db::index_pending`):
-- the analyzer is Rust, so a migration can only say what needs indexing.
CREATE TABLE memory_fts_pending (record_id BIGINT PRIMARY KEY, org TEXT NOT NULL);
INSERT INTO memory_fts_pending SELECT id, org FROM memory_records WHERE status = 'active';
-- How the speaker wants to be served is read every turn: by owner and kind, newest first.
CREATE INDEX memory_records_by_owner_kind ON memory_records (org, owner, kind, status, said_at);
