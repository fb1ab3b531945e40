-- A conversation's live (untrimmed) lines are read every turn (the history
-- window, the size check that triggers a trim). Indexed apart from its
-- trimmed past, so those reads do not slow down as the conversation ages.
CREATE INDEX messages_live ON messages (org, agent, conversation, id) WHERE trimmed = 0;
