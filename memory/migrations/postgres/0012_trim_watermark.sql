-- A trim moves its conversation's watermark (`live_history.trimmed_through`,
-- the id of the newest trimmed line) and keeps its slice's id range in the
-- archive (`first_id`..=`last_id`), instead of marking each line of the
-- slice with its archive: that rewrote a hundred lines scattered over the
-- table and two indexes per trim, and the index of live lines cost every
-- insert an entry of its own. A line is live when its id is past its
-- conversation's watermark.
ALTER TABLE live_history ADD COLUMN trimmed_through BIGINT NOT NULL DEFAULT 0;
ALTER TABLE archives ADD COLUMN first_id BIGINT NOT NULL DEFAULT 0,
                     ADD COLUMN last_id BIGINT NOT NULL DEFAULT 0;

UPDATE archives a SET first_id = s.first_id, last_id = s.last_id
FROM (SELECT org, trimmed, MIN(id) AS first_id, MAX(id) AS last_id
      FROM messages WHERE trimmed <> 0 GROUP BY org, trimmed) s
WHERE s.org = a.org AND s.trimmed = a.id;

-- A conversation whose every line was trimmed had no row.
INSERT INTO live_history (org, agent, conversation, messages, chars)
SELECT DISTINCT org, agent, conversation, 0, 0 FROM messages WHERE trimmed <> 0
ON CONFLICT (org, agent, conversation) DO NOTHING;

UPDATE live_history h SET trimmed_through = s.through
FROM (SELECT org, agent, conversation, MAX(id) AS through
      FROM messages WHERE trimmed <> 0 GROUP BY org, agent, conversation) s
WHERE s.org = h.org AND s.agent = h.agent AND s.conversation = h.conversation;

-- Trims take the oldest lines, so the trimmed lines were each conversation's
-- first; the sizes are counted again by the new rule all the same.
UPDATE live_history h SET
    messages = (SELECT COUNT(*) FROM messages m
        WHERE m.org = h.org AND m.agent = h.agent AND m.conversation = h.conversation
          AND m.id > h.trimmed_through),
    chars = (SELECT COALESCE(SUM(LENGTH(m.text)), 0) FROM messages m
        WHERE m.org = h.org AND m.agent = h.agent AND m.conversation = h.conversation
          AND m.id > h.trimmed_through);

DROP TRIGGER live_history_insert ON messages;
DROP TRIGGER live_history_update ON messages;
DROP TRIGGER live_history_delete ON messages;
DROP INDEX messages_by_archive;
DROP INDEX messages_live;
ALTER TABLE messages DROP COLUMN trimmed;

-- A line's place (org, agent, conversation) never changes: OLD's is NEW's.
-- Only a line past its conversation's watermark counts.
CREATE OR REPLACE FUNCTION live_history_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO live_history AS h (org, agent, conversation, messages, chars)
        VALUES (NEW.org, NEW.agent, NEW.conversation, 1, LENGTH(NEW.text))
        ON CONFLICT (org, agent, conversation)
        DO UPDATE SET messages = h.messages + 1, chars = h.chars + EXCLUDED.chars
        WHERE h.trimmed_through < NEW.id;
    ELSIF TG_OP = 'UPDATE' THEN
        UPDATE live_history SET chars = chars - LENGTH(OLD.text) + LENGTH(NEW.text)
        WHERE org = OLD.org AND agent = OLD.agent AND conversation = OLD.conversation
          AND trimmed_through < OLD.id;
    ELSE
        UPDATE live_history SET messages = messages - 1, chars = chars - LENGTH(OLD.text)
        WHERE org = OLD.org AND agent = OLD.agent AND conversation = OLD.conversation
          AND trimmed_through < OLD.id;
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER live_history_insert AFTER INSERT ON messages
FOR EACH ROW EXECUTE FUNCTION live_history_keep();
CREATE TRIGGER live_history_update AFTER UPDATE OF text ON messages
FOR EACH ROW WHEN (OLD.text IS DISTINCT FROM NEW.text) EXECUTE FUNCTION live_history_keep();
CREATE TRIGGER live_history_delete AFTER DELETE ON messages
FOR EACH ROW EXECUTE FUNCTION live_history_keep();
