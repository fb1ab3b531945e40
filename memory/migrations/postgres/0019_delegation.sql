-- Delegation: a person (or an administrator for them) lets another paired
-- person act for them. A delegated turn runs as the delegate, with the
-- delegate's own memory; the grant only names whose behalf it is.
CREATE TABLE delegations (
    org TEXT NOT NULL,
    principal TEXT NOT NULL,
    delegate TEXT NOT NULL,
    granted_by TEXT NOT NULL,
    granted_at BIGINT NOT NULL,
    PRIMARY KEY (org, principal, delegate)
);
CREATE INDEX delegations_delegate ON delegations (org, delegate);
-- A key made `--on-behalf-of` a principal works only while its grant holds.
ALTER TABLE api_keys ADD COLUMN on_behalf_of TEXT;
-- What a delegated turn wrote names whose behalf it was written on.
ALTER TABLE memory_records ADD COLUMN on_behalf_of TEXT;
