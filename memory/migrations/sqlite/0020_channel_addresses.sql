-- Where a channel posts into one of its conversations outside a turn: the
-- platform's reference to it (for the Teams bot, the Bot Framework
-- conversation reference: service URL, conversation, tenant, the bot's id),
-- as the channel wrote it, stored at first contact. Opaque to memory; no
-- person's words or ids.
CREATE TABLE channel_addresses (
    org TEXT NOT NULL,
    channel TEXT NOT NULL,
    conversation TEXT NOT NULL,
    address TEXT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (org, channel, conversation)
);
