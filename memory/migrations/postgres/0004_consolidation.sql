-- Consolidation: records a run showed to the model (or found without any record
-- sharing their words). A seen record is shown again only when a new record
-- joins its batch, so a run spends its model calls on what changed.
CREATE TABLE consolidation_seen (
    org TEXT NOT NULL,
    record_id BIGINT NOT NULL,
    seen_at BIGINT NOT NULL,
    run_id TEXT NOT NULL,
    PRIMARY KEY (org, record_id)
);
