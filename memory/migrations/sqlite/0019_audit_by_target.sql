-- A turn's first read asks which audit entries exist about its speaker
-- (`pairing.approve`, `oversight.promised`: whether steward's promises are
-- owed), and `AuditTrail::about` reads one target's entries: through this
-- index, not a scan of the organisation's whole log.
CREATE INDEX audit_log_by_target ON audit_log (org, target, action);
