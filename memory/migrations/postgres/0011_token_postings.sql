-- A search reads record ids by placed token from a btree of (token, rowid)
-- pairs: a btree answers from the index alone (index-only scans, where the
-- visibility map says a page is all visible), while every id the GIN index
-- matched was a heap fetch of its memory_fts row (about 5 µs a row warm; a
-- search at 1M records read hundreds). The tsvector and its GIN index stay:
-- the postings a record drops are the lexemes its row holds, the common
-- tokens are counted from it, and a query of common words only is answered
-- by GIN, which intersects long posting lists far faster than a btree.
-- Tokens compare as bytes ("C"): equality is the same, and a descent of the
-- btree does not call the locale's collation at each key.
CREATE TABLE memory_fts_postings (
    token TEXT COLLATE "C" NOT NULL,
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
