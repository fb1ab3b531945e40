-- A trim moves its conversation's watermark (`live_history.trimmed_through`,
-- the id of the newest trimmed line) and keeps its slice's id range in the
-- archive (`first_id`..=`last_id`), instead of marking each line of the
-- slice with its archive: that rewrote a hundred lines scattered over the
-- table and two indexes (about 0.9 MB of WAL a trim), and the index of live
-- lines cost every insert a page of its own. A line is live when its id is
-- past its conversation's watermark.
ALTER TABLE live_history ADD COLUMN trimmed_through BIGINT NOT NULL DEFAULT 0;
ALTER TABLE archives ADD COLUMN first_id BIGINT NOT NULL DEFAULT 0;
ALTER TABLE archives ADD COLUMN last_id BIGINT NOT NULL DEFAULT 0;

UPDATE archives SET
    first_id = COALESCE((SELECT MIN(m.id) FROM messages m WHERE m.org = archives.org AND m.trimmed = archives.id), 0),
    last_id = COALESCE((SELECT MAX(m.id) FROM messages m WHERE m.org = archives.org AND m.trimmed = archives.id), 0);

-- A conversation whose every line was trimmed had no row.
INSERT INTO live_history (org, agent, conversation, messages, chars)
SELECT DISTINCT org, agent, conversation, 0, 0 FROM messages WHERE trimmed <> 0
ON CONFLICT (org, agent, conversation) DO NOTHING;

UPDATE live_history SET trimmed_through = COALESCE((SELECT MAX(m.id) FROM messages m
    WHERE m.org = live_history.org AND m.agent = live_history.agent
      AND m.conversation = live_history.conversation AND m.trimmed <> 0), 0);

-- Trims take the oldest lines, so the trimmed lines were each conversation's
-- first; the sizes are counted again by the new rule all the same.
UPDATE live_history SET
    messages = (SELECT COUNT(*) FROM messages m
        WHERE m.org = live_history.org AND m.agent = live_history.agent
          AND m.conversation = live_history.conversation AND m.id > live_history.trimmed_through),
    chars = (SELECT COALESCE(SUM(LENGTH(m.text)), 0) FROM messages m
        WHERE m.org = live_history.org AND m.agent = live_history.agent
          AND m.conversation = live_history.conversation AND m.id > live_history.trimmed_through);

DROP TRIGGER live_history_insert;
DROP TRIGGER live_history_update;
DROP TRIGGER live_history_delete;
DROP INDEX messages_by_archive;
DROP INDEX messages_live;
ALTER TABLE messages DROP COLUMN trimmed;

CREATE TRIGGER live_history_insert AFTER INSERT ON messages
BEGIN
    INSERT INTO live_history (org, agent, conversation, messages, chars)
    VALUES (NEW.org, NEW.agent, NEW.conversation, 1, LENGTH(NEW.text))
    ON CONFLICT (org, agent, conversation)
    DO UPDATE SET messages = messages + 1, chars = chars + excluded.chars
    WHERE trimmed_through < NEW.id;
END;

CREATE TRIGGER live_history_update AFTER UPDATE OF text ON messages
BEGIN
    UPDATE live_history SET chars = chars - LENGTH(OLD.text) + LENGTH(NEW.text)
    WHERE org = OLD.org AND agent = OLD.agent AND conversation = OLD.conversation
      AND trimmed_through < OLD.id;
END;

CREATE TRIGGER live_history_delete AFTER DELETE ON messages
BEGIN
    UPDATE live_history SET messages = messages - 1, chars = chars - LENGTH(OLD.text)
    WHERE org = OLD.org AND agent = OLD.agent AND conversation = OLD.conversation
      AND trimmed_through < OLD.id;
END;
