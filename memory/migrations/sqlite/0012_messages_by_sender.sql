-- A person's lines (their export, their erasure) were a scan of every line
-- in the store. Agent lines have no sender and are left out of the index.
CREATE INDEX messages_by_sender ON messages (org, sender) WHERE sender IS NOT NULL;
