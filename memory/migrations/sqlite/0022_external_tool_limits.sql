-- An approval of an external tool also says whether automated runs may call
-- it (`runs`, 1: yes) and how many calls of it a minute are let through, all
-- speakers together (`calls_per_minute`; 0: `[mcp] tool_calls_per_minute`).
ALTER TABLE external_tools ADD COLUMN runs BIGINT NOT NULL DEFAULT 0;
ALTER TABLE external_tools ADD COLUMN calls_per_minute BIGINT NOT NULL DEFAULT 0;
