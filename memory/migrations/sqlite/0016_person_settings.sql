-- A person's own settings, stored per person. `auto_keep` (0 or 1, default
-- off): implicit items from this person are kept without asking only when
-- the operator's per-agent auto_keep is on as well (the ceiling).
CREATE TABLE person_settings (
    org TEXT NOT NULL,
    user_id TEXT NOT NULL,
    auto_keep BIGINT NOT NULL DEFAULT 0,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (org, user_id)
);
