-- What a turn's first read would otherwise look up about its speaker every
-- time — the work roles they hold, and the audit entries that say whether
-- steward's promises are owed (`pairing.approve`, `oversight.promised`) —
-- changes rarely. A generation per organisation, moved by the database
-- itself on every such change whichever path makes it, tells a copy kept
-- in a process (on any replica) that it is stale (`store::people`).
CREATE TABLE people_generations (
    org TEXT PRIMARY KEY,
    generation BIGINT NOT NULL
);
CREATE TRIGGER people_roles_insert AFTER INSERT ON user_roles BEGIN
    INSERT INTO people_generations (org, generation) VALUES (NEW.org, 1)
    ON CONFLICT (org) DO UPDATE SET generation = generation + 1;
END;
CREATE TRIGGER people_roles_update AFTER UPDATE ON user_roles BEGIN
    INSERT INTO people_generations (org, generation) VALUES (NEW.org, 1)
    ON CONFLICT (org) DO UPDATE SET generation = generation + 1;
END;
CREATE TRIGGER people_roles_delete AFTER DELETE ON user_roles BEGIN
    INSERT INTO people_generations (org, generation) VALUES (OLD.org, 1)
    ON CONFLICT (org) DO UPDATE SET generation = generation + 1;
END;
CREATE TRIGGER people_audit_insert AFTER INSERT ON audit_log
WHEN NEW.action IN ('pairing.approve', 'oversight.promised') BEGIN
    INSERT INTO people_generations (org, generation) VALUES (NEW.org, 1)
    ON CONFLICT (org) DO UPDATE SET generation = generation + 1;
END;
CREATE TRIGGER people_audit_update AFTER UPDATE ON audit_log
WHEN OLD.action IN ('pairing.approve', 'oversight.promised')
  OR NEW.action IN ('pairing.approve', 'oversight.promised') BEGIN
    INSERT INTO people_generations (org, generation) VALUES (NEW.org, 1)
    ON CONFLICT (org) DO UPDATE SET generation = generation + 1;
END;
CREATE TRIGGER people_audit_delete AFTER DELETE ON audit_log
WHEN OLD.action IN ('pairing.approve', 'oversight.promised') BEGIN
    INSERT INTO people_generations (org, generation) VALUES (OLD.org, 1)
    ON CONFLICT (org) DO UPDATE SET generation = generation + 1;
END;
