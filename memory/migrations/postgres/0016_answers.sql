-- Idempotent answers: an inbound line keeps the platform id it spent (the
-- turn loop's namespaced id, as in seen_messages), and each reply line names
-- the inbound line it answers. A retry with a spent id finds its message and
-- returns the stored reply, or runs the turn when there is none yet (a crash
-- came between the message and its answer).
ALTER TABLE messages ADD COLUMN platform_id TEXT;
ALTER TABLE messages ADD COLUMN reply_to BIGINT;
CREATE INDEX messages_by_platform_id ON messages (org, channel, platform_id) WHERE platform_id IS NOT NULL;
CREATE INDEX messages_by_reply_to ON messages (reply_to) WHERE reply_to IS NOT NULL;
