-- A seen mark keeps the line that spent its platform id, so a retry finds
-- its message through the mark's primary key. The index on the lines'
-- platform ids goes: keyed by a platform's random id, every insert wrote
-- a leaf page of its own (about six page writes a turn under load,
-- docs/benchmarks.md). Marks from before this migration are given their
-- line while that index still stands.
ALTER TABLE seen_messages ADD COLUMN line BIGINT;
UPDATE seen_messages SET line = (
    SELECT m.id FROM messages m
    WHERE m.org = seen_messages.org AND m.channel = seen_messages.channel
      AND m.platform_id = seen_messages.platform_id
    ORDER BY m.id LIMIT 1
);
DROP INDEX messages_by_platform_id;
