-- An approval of an external tool also says whether each call carries the
-- organisation and the speaker's stored id to the server (`identity`, 1: yes;
-- docs/tools.md). Off unless an administrator says so.
ALTER TABLE external_tools ADD COLUMN identity BIGINT NOT NULL DEFAULT 0;
