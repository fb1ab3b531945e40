-- A search reads record ids by placed token from a btree of (token, rowid)
-- pairs instead of the GIN index: a btree answers from the index alone
-- (index-only scans, where the visibility map says a page is all visible),
-- while every id the GIN index matched was a heap fetch (about 5 µs a row
-- warm; a search at 1M records read hundreds). `memory_fts` keeps each active
-- record's tokens as its tsvector: the postings a record drops are the
-- lexemes its row holds, and the common tokens are counted from it.
CREATE TABLE memory_fts_postings (
    token TEXT NOT NULL,
    rowid BIGINT NOT NULL
) WITH (
    -- Rows are inserted and rarely deleted: vacuumed often enough that the
    -- newest ids (read first) are answered from the index alone too.
    autovacuum_vacuum_insert_threshold = 10000,
    autovacuum_vacuum_insert_scale_factor = 0,
    autovacuum_vacuum_scale_factor = 0.02
);
INSERT INTO memory_fts_postings (token, rowid)
SELECT unnest(tsvector_to_array(doc)), rowid FROM memory_fts;
ALTER TABLE memory_fts_postings ADD PRIMARY KEY (token, rowid);
DROP INDEX memory_fts_doc;
