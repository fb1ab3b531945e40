-- Each indexed token carries the place it is read in: `p<16 hex>_<token>`,
-- where the hex digits begin sha256(org NUL visibility key) (see
-- memory::store::fulltext). A search names only its own places' tokens, so
-- the engine touches no other organisation's or person's rows, and how many
-- records hold a token is counted per place. The place columns go; the table
-- keeps no copy of the text (contentless, deletable by rowid).
DROP TABLE memory_fts_vocab;
DROP TABLE memory_fts;
CREATE VIRTUAL TABLE memory_fts USING fts5(
    tokens,
    content = '',
    contentless_delete = 1,
    tokenize = "ascii tokenchars '_-.'"
);
CREATE VIRTUAL TABLE memory_fts_vocab USING fts5vocab(memory_fts, 'row');
-- Common tokens are placed tokens now; the row with the empty token holds
-- how many records the index held at the last refresh.
DELETE FROM memory_fts_common;
DELETE FROM memory_fts_pending;
INSERT INTO memory_fts_pending SELECT id, org FROM memory_records WHERE status = 'active';
