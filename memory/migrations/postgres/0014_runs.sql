-- Automated runs: a schedule's slot, a signed webhook delivery, or a skill
-- run on demand, each under a system principal. Its lines are stored in its
-- conversation (run:<name>/<id>); this row says what started it, what it
-- followed and how it ended.
CREATE TABLE runs (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    org TEXT NOT NULL,
    agent TEXT NOT NULL,
    name TEXT NOT NULL,
    -- schedule | webhook | on_demand
    trigger TEXT NOT NULL,
    principal TEXT NOT NULL,
    -- The skill followed as a standing procedure ('' and 0 when none).
    skill TEXT NOT NULL,
    skill_rev BIGINT NOT NULL,
    started_by TEXT NOT NULL,
    conversation TEXT NOT NULL,
    deliver TEXT NOT NULL,
    -- running | answered | undelivered | failed
    outcome TEXT NOT NULL,
    error TEXT NOT NULL,
    started_at BIGINT NOT NULL,
    finished_at BIGINT
);
CREATE INDEX runs_by_org ON runs (org, id);
-- A webhook delivery id is taken once: a repeat is refused (409).
CREATE TABLE webhook_deliveries (
    org TEXT NOT NULL,
    hook TEXT NOT NULL,
    delivery TEXT NOT NULL,
    received_at BIGINT NOT NULL,
    PRIMARY KEY (org, hook, delivery)
);
