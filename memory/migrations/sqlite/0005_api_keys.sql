-- API keys get a public id (shown at creation, listed, revoked by; never the
-- secret or its hash) and a revocation of their own. A revoked key never
-- works again: revoking a user revokes their keys at that moment, so pairing
-- the same person again does not bring old keys back.
ALTER TABLE api_keys ADD COLUMN key_id TEXT;
ALTER TABLE api_keys ADD COLUMN revoked_at BIGINT;
ALTER TABLE api_keys ADD COLUMN revoked_by TEXT;
-- Keys made before ids existed get a random one.
UPDATE api_keys SET key_id = 'key-' || upper(hex(randomblob(4)));
-- Keys of users revoked before this migration stay dead when the user is paired again.
UPDATE api_keys
   SET revoked_at = (SELECT u.updated_at FROM users u
                      WHERE u.org = api_keys.org AND u.user_id = api_keys.user_id),
       revoked_by = 'migration'
 WHERE EXISTS (SELECT 1 FROM users u
                WHERE u.org = api_keys.org AND u.user_id = api_keys.user_id
                  AND u.status = 'revoked');
CREATE UNIQUE INDEX api_keys_key_id ON api_keys (key_id);
CREATE INDEX api_keys_user ON api_keys (org, user_id);
