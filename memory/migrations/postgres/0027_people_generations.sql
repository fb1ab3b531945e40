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

CREATE FUNCTION people_generation_bump() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    changed TEXT;
BEGIN
    IF TG_OP = 'DELETE' THEN
        changed := OLD.org;
    ELSE
        changed := NEW.org;
    END IF;
    INSERT INTO people_generations AS g (org, generation) VALUES (changed, 1)
    ON CONFLICT (org) DO UPDATE SET generation = g.generation + 1;
    RETURN NULL;
END;
$$;

CREATE TRIGGER people_roles AFTER INSERT OR UPDATE OR DELETE ON user_roles
FOR EACH ROW EXECUTE FUNCTION people_generation_bump();
CREATE TRIGGER people_audit_insert AFTER INSERT ON audit_log
FOR EACH ROW WHEN (NEW.action IN ('pairing.approve', 'oversight.promised'))
EXECUTE FUNCTION people_generation_bump();
CREATE TRIGGER people_audit_update AFTER UPDATE ON audit_log
FOR EACH ROW WHEN (OLD.action IN ('pairing.approve', 'oversight.promised')
    OR NEW.action IN ('pairing.approve', 'oversight.promised'))
EXECUTE FUNCTION people_generation_bump();
CREATE TRIGGER people_audit_delete AFTER DELETE ON audit_log
FOR EACH ROW WHEN (OLD.action IN ('pairing.approve', 'oversight.promised'))
EXECUTE FUNCTION people_generation_bump();
