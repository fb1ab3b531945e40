-- A dashboard session belongs to a person: the built-in admin (signed in
-- with the admin token) or a paired person signed in through the identity
-- provider. Sessions made before this were all the built-in admin's.
ALTER TABLE dashboard_sessions ADD COLUMN user_id TEXT NOT NULL DEFAULT 'admin';
