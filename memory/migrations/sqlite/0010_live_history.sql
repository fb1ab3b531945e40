-- Each conversation's live (untrimmed) history size, kept by the database
-- itself on every insert, trim, text change and delete of a line. A turn
-- reads it as one row instead of summing every live line: the sum grew with
-- the conversation, up to the whole trim budget, on every turn.
CREATE TABLE live_history (
    org TEXT NOT NULL,
    agent TEXT NOT NULL,
    conversation TEXT NOT NULL,
    messages BIGINT NOT NULL,
    chars BIGINT NOT NULL,
    PRIMARY KEY (org, agent, conversation)
);

INSERT INTO live_history (org, agent, conversation, messages, chars)
SELECT org, agent, conversation, COUNT(*), COALESCE(SUM(LENGTH(text)), 0)
FROM messages WHERE trimmed = 0 GROUP BY org, agent, conversation;

CREATE TRIGGER live_history_insert AFTER INSERT ON messages WHEN NEW.trimmed = 0
BEGIN
    INSERT INTO live_history (org, agent, conversation, messages, chars)
    VALUES (NEW.org, NEW.agent, NEW.conversation, 1, LENGTH(NEW.text))
    ON CONFLICT (org, agent, conversation)
    DO UPDATE SET messages = messages + 1, chars = chars + excluded.chars;
END;

-- A line's place (org, agent, conversation) never changes; its trim mark and
-- its text (erasure) can.
CREATE TRIGGER live_history_update AFTER UPDATE OF trimmed, text ON messages
WHEN OLD.trimmed = 0 OR NEW.trimmed = 0
BEGIN
    UPDATE live_history
    SET messages = messages - (OLD.trimmed = 0) + (NEW.trimmed = 0),
        chars = chars
            - CASE WHEN OLD.trimmed = 0 THEN LENGTH(OLD.text) ELSE 0 END
            + CASE WHEN NEW.trimmed = 0 THEN LENGTH(NEW.text) ELSE 0 END
    WHERE org = OLD.org AND agent = OLD.agent AND conversation = OLD.conversation;
END;

CREATE TRIGGER live_history_delete AFTER DELETE ON messages WHEN OLD.trimmed = 0
BEGIN
    UPDATE live_history
    SET messages = messages - 1, chars = chars - LENGTH(OLD.text)
    WHERE org = OLD.org AND agent = OLD.agent AND conversation = OLD.conversation;
END;
