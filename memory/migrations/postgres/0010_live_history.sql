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

CREATE FUNCTION live_history_keep() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    d_messages BIGINT := 0;
    d_chars BIGINT := 0;
BEGIN
    -- A line's place (org, agent, conversation) never changes: OLD's is NEW's.
    IF TG_OP <> 'INSERT' AND OLD.trimmed = 0 THEN
        d_messages := d_messages - 1;
        d_chars := d_chars - LENGTH(OLD.text);
    END IF;
    IF TG_OP <> 'DELETE' AND NEW.trimmed = 0 THEN
        d_messages := d_messages + 1;
        d_chars := d_chars + LENGTH(NEW.text);
    END IF;
    IF d_messages <> 0 OR d_chars <> 0 THEN
        IF TG_OP = 'DELETE' THEN
            UPDATE live_history SET messages = messages + d_messages, chars = chars + d_chars
            WHERE org = OLD.org AND agent = OLD.agent AND conversation = OLD.conversation;
        ELSE
            INSERT INTO live_history AS h (org, agent, conversation, messages, chars)
            VALUES (NEW.org, NEW.agent, NEW.conversation, d_messages, d_chars)
            ON CONFLICT (org, agent, conversation)
            DO UPDATE SET messages = h.messages + EXCLUDED.messages, chars = h.chars + EXCLUDED.chars;
        END IF;
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER live_history_insert AFTER INSERT ON messages
FOR EACH ROW WHEN (NEW.trimmed = 0) EXECUTE FUNCTION live_history_keep();
CREATE TRIGGER live_history_update AFTER UPDATE OF trimmed, text ON messages
FOR EACH ROW WHEN (OLD.trimmed = 0 OR NEW.trimmed = 0) EXECUTE FUNCTION live_history_keep();
CREATE TRIGGER live_history_delete AFTER DELETE ON messages
FOR EACH ROW WHEN (OLD.trimmed = 0) EXECUTE FUNCTION live_history_keep();
