//! The role tier's two-party curation: a proposal, a manager's acceptance,
//! a different holder's confirmation, each bound to the content hash; edits
//! and retirements (docs/memory.md, "Roles and role memory").

use super::{
    content_hash, valid_role, CurationStep, ProposalStatus, Result, RoleEntry, RoleError, RoleKind,
    RoleMemory, PROPOSAL_TTL_MS, SHOWN_HASH_CHARS,
};
use crate::admin_text::{AdminText, Identifier};
use crate::model::{NewRecord, Scope, Status, ANY_AGENT};
use crate::scrub::scrub;
use crate::store::audit::Act;
use crate::store::records::{activate_on, fetch, insert_on, SubjectRuleRun};
use crate::store::revisions::{insert_revision, NewRevision, RevisionMeta};
use crate::store::{Result as StoreResult, StoreError};
use sqlx::{Any, Transaction};

/// What a proposal is called in the audit log, in its record's source and
/// in the revisions it makes.
fn proposal_ref(id: i64) -> String {
    format!("role_proposal:{id}")
}

/// Append `action` on proposal `id` to the audit log, in its transaction.
async fn audit_proposal(
    tx: &mut Transaction<'_, Any>,
    by: Act<'_>,
    action: &str,
    id: i64,
    detail: &AdminText,
) -> StoreResult<()> {
    by.audit(&mut **tx, action, &proposal_ref(id), detail).await
}

#[derive(sqlx::FromRow)]
struct Row {
    id: i64,
    org: String,
    role: String,
    kind: String,
    content: String,
    content_hash: String,
    status: String,
    proposed_by: String,
    on_behalf_of: Option<String>,
    source_record: Option<i64>,
    proposed_at: i64,
    accepted_by: Option<String>,
    accepted_hash: Option<String>,
    accepted_at: Option<i64>,
    confirmed_by: Option<String>,
    confirmed_at: Option<i64>,
    record_id: Option<i64>,
    record_status: Option<String>,
}

const SELECT: &str = "SELECT p.id, p.org, p.role, p.kind, p.content, p.content_hash, p.status, \
     p.proposed_by, p.on_behalf_of, p.source_record, p.proposed_at, p.accepted_by, p.accepted_hash, \
     p.accepted_at, p.confirmed_by, p.confirmed_at, p.record_id, r.status AS record_status \
     FROM role_proposals p LEFT JOIN memory_records r ON r.org = p.org AND r.id = p.record_id";

impl Row {
    fn entry(self, now: i64) -> StoreResult<(RoleEntry, Option<String>)> {
        let corrupt =
            |what: &str, v: &str| StoreError::Corrupt(format!("role proposal {what} `{v}`"));
        let kind: RoleKind = self.kind.parse().map_err(|_| corrupt("kind", &self.kind))?;
        let mut status: ProposalStatus = self
            .status
            .parse()
            .map_err(|_| corrupt("status", &self.status))?;
        if matches!(status, ProposalStatus::Proposed | ProposalStatus::Accepted)
            && now - self.proposed_at >= PROPOSAL_TTL_MS
        {
            status = ProposalStatus::Expired;
        }
        let record_status = match self.record_status {
            Some(s) => Some(Status::parse(&s).ok_or_else(|| corrupt("record status", &s))?),
            None => None,
        };
        Ok((
            RoleEntry {
                id: self.id,
                org: self.org,
                role: self.role,
                kind,
                content: self.content,
                content_hash: self.content_hash,
                status,
                proposed_by: self.proposed_by,
                on_behalf_of: self.on_behalf_of,
                source_record: self.source_record,
                proposed_at: self.proposed_at,
                accepted_by: self.accepted_by,
                accepted_at: self.accepted_at,
                confirmed_by: self.confirmed_by,
                confirmed_at: self.confirmed_at,
                record_id: self.record_id,
                record_status,
            },
            self.accepted_hash,
        ))
    }
}

/// One of the two decisions on proposal `id` (accept, confirm), taken by
/// `by.actor` on the text whose content hash is `seen` (when given).
#[derive(Debug, Clone, Copy)]
pub struct ProposalDecision<'a> {
    pub id: i64,
    pub seen: Option<&'a str>,
    pub by: Act<'a>,
}

/// A proposal about to be made.
#[derive(Debug, Clone)]
pub struct NewRoleProposal<'a> {
    pub org: &'a str,
    pub role: &'a str,
    pub kind: RoleKind,
    pub content: &'a str,
    /// Who proposes it (a paired person).
    pub proposed_by: &'a str,
    /// Set when a delegated turn or key proposes it.
    pub on_behalf_of: Option<&'a str>,
    /// The record of the proposer's it was shared from.
    pub source_record: Option<i64>,
    pub now: i64,
}

impl RoleMemory<'_> {
    /// The names that may not appear in role memory: every paired person's display name.
    async fn paired_names(&self, org: &str) -> StoreResult<Vec<String>> {
        Ok(self
            .db
            .identity()
            .paired_users(org)
            .await?
            .into_iter()
            .map(|u| u.name)
            .filter(|n| n != "admin")
            .collect())
    }

    /// Screen and scrub a proposal's text: the text to keep.
    async fn clean(&self, org: &str, content: &str) -> Result<String> {
        let names = self.paired_names(org).await?;
        scrub(content, &names)?;
        let kept = crate::screen::screen_text("", content)?;
        // What sanitising left must pass too.
        scrub(&kept, &names)?;
        Ok(kept)
    }

    /// Propose an entry to a role's memory: by a holder of the role, a
    /// manager of it or an administrator. Refused, with nothing stored, when
    /// the text holds personal data or ids. Audited `role_memory.propose`.
    pub async fn propose(&self, p: &NewRoleProposal<'_>) -> Result<RoleEntry> {
        valid_role(p.role)?;
        self.active_user(p.org, p.proposed_by).await?;
        if !self.holds(p.org, p.proposed_by, p.role).await?
            && !self.curates(p.org, p.proposed_by, p.role).await?
        {
            return Err(RoleError::MayNotPropose(
                p.proposed_by.to_string(),
                p.role.to_string(),
            ));
        }
        let content = self.clean(p.org, p.content).await?;
        let hash = content_hash(&content);
        let mut tx = crate::store::begin(&self.db.pool).await?;
        let text = "INSERT INTO role_proposals (org, role, kind, content, content_hash, status, \
                    proposed_by, on_behalf_of, source_record, proposed_at) \
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id";
        let q = sql!(text, p.org, p.role, p.kind.as_str(), &content, &hash)
            .arg(ProposalStatus::Proposed.as_str())
            .arg(p.proposed_by)
            .arg(p.on_behalf_of)
            .arg(p.source_record)
            .arg(p.now);
        let (id,): (i64,) = q.one(&mut *tx).await?;
        let proposed = admin_text!("{} for role {}", p.kind.as_str(), Identifier::new(p.role));
        let detail = match p.on_behalf_of {
            Some(principal) => {
                admin_text!("{}; on behalf of {}", proposed, Identifier::new(principal))
            }
            None => proposed,
        };
        let by = Act {
            org: p.org,
            actor: p.proposed_by,
            at: p.now,
        };
        audit_proposal(&mut tx, by, "role_memory.propose", id, &detail).await?;
        tx.commit().await?;
        self.get(p.org, id, p.now).await
    }

    /// Share one of `sharer`'s own active records with a role they hold: a
    /// proposal of it (a vocabulary record becomes a term, anything else a lesson).
    pub async fn share(
        &self,
        org: &str,
        record: i64,
        role: &str,
        sharer: &str,
        on_behalf_of: Option<&str>,
        now: i64,
    ) -> Result<RoleEntry> {
        valid_role(role)?;
        let mut conn = self.db.pool.acquire().await?;
        let rec = fetch(&mut conn, org, record).await?;
        drop(conn);
        let Some(rec) = rec.filter(|r| {
            r.status == Status::Active
                && r.scope.is_personal()
                && r.owner.as_deref() == Some(sharer)
        }) else {
            return Err(RoleError::NotYourRecord(record));
        };
        if !self.holds(org, sharer, role).await? {
            return Err(RoleError::NotHolder(sharer.to_string(), role.to_string()));
        }
        let kind = if rec.is_kind(crate::Kind::Vocabulary) {
            RoleKind::Term
        } else {
            RoleKind::Lesson
        };
        self.propose(&NewRoleProposal {
            org,
            role,
            kind,
            content: &rec.content,
            proposed_by: sharer,
            on_behalf_of,
            source_record: Some(record),
            now,
        })
        .await
    }

    async fn row(&self, org: &str, id: i64, now: i64) -> Result<(RoleEntry, Option<String>)> {
        let text = format!("{SELECT} WHERE p.org = $1 AND p.id = $2");
        let row: Option<Row> = sql!(text, org, id).opt(&self.db.pool).await?;
        Ok(row.ok_or(RoleError::NotFound(id))?.entry(now)?)
    }

    /// One proposal, as of `now` (a pending one past its 14 days reads `expired`).
    pub async fn get(&self, org: &str, id: i64, now: i64) -> Result<RoleEntry> {
        Ok(self.row(org, id, now).await?.0)
    }

    /// The proposals and entries of a role, oldest first, as of `now`.
    pub async fn list(&self, org: &str, role: &str, now: i64) -> Result<Vec<RoleEntry>> {
        valid_role(role)?;
        let text = format!("{SELECT} WHERE p.org = $1 AND p.role = $2 ORDER BY p.id");
        let rows: Vec<Row> = sql!(text, org, role).all(&self.db.pool).await?;
        Ok(rows
            .into_iter()
            .map(|r| r.entry(now).map(|(e, _)| e))
            .collect::<StoreResult<_>>()?)
    }

    /// The roles that have proposals or entries, by name.
    pub async fn roles_with_memory(&self, org: &str) -> StoreResult<Vec<String>> {
        let text = "SELECT DISTINCT role FROM role_proposals WHERE org = $1 ORDER BY role";
        let rows: Vec<(String,)> = sql!(text, org).all(&self.db.pool).await?;
        Ok(rows.into_iter().map(|(r,)| r).collect())
    }

    /// Mark a pending proposal past its 14 days expired (audited), and refuse.
    async fn refuse_if_expired(&self, e: &RoleEntry, now: i64) -> Result<()> {
        if e.status != ProposalStatus::Expired {
            return Ok(());
        }
        let mut tx = crate::store::begin(&self.db.pool).await?;
        let text = "UPDATE role_proposals SET status = $1 WHERE org = $2 AND id = $3 AND status IN ($4, $5)";
        let q = sql!(
            text,
            ProposalStatus::Expired.as_str(),
            &e.org,
            e.id,
            ProposalStatus::Proposed.as_str(),
            ProposalStatus::Accepted.as_str()
        );
        if q.exec(&mut *tx).await? > 0 {
            let (action, detail) = (
                "role_memory.expire",
                AdminText::fixed("not confirmed within 14 days"),
            );
            let by = Act {
                org: &e.org,
                actor: "system",
                at: now,
            };
            audit_proposal(&mut tx, by, action, e.id, &detail).await?;
        }
        tx.commit().await?;
        Err(RoleError::Expired(e.id))
    }

    /// Whether `seen` (the full hash, or its first [`SHOWN_HASH_CHARS`]
    /// characters at least) is the hash of the text as it is now.
    fn bound(e: &RoleEntry, seen: Option<&str>) -> Result<()> {
        match seen.map(|h| h.trim().to_ascii_lowercase()) {
            Some(h) if h.len() < SHOWN_HASH_CHARS || !e.content_hash.starts_with(&h) => {
                Err(RoleError::StaleHash {
                    current: e.content_hash.clone(),
                })
            }
            _ => Ok(()),
        }
    }

    /// Accept a proposal: `actor` holds `role_memory.manage` for its role.
    /// `seen` is the content hash the actor decided on (refused when the
    /// text changed since). Audited `role_memory.accept`.
    pub async fn accept(&self, decision: &ProposalDecision<'_>) -> Result<RoleEntry> {
        let ProposalDecision { id, seen, by } = *decision;
        let (org, actor, now) = (by.org, by.actor, by.at);
        let e = self.get(org, id, now).await?;
        self.refuse_if_expired(&e, now).await?;
        if e.status != ProposalStatus::Proposed {
            return Err(e.wrong_state(ProposalStatus::Proposed.as_str()));
        }
        if !self.manages(org, actor, &e.role).await? {
            return Err(RoleError::NotManager(actor.to_string(), e.role));
        }
        Self::bound(&e, seen)?;
        let mut tx = crate::store::begin(&self.db.pool).await?;
        let text = "UPDATE role_proposals SET status = $1, accepted_by = $2, accepted_hash = $3, \
                    accepted_at = $4 WHERE org = $5 AND id = $6 AND status = $7 AND content_hash = $3";
        let q = sql!(
            text,
            ProposalStatus::Accepted.as_str(),
            actor,
            &e.content_hash,
            now,
            org,
            id,
            ProposalStatus::Proposed.as_str()
        );
        if q.exec(&mut *tx).await? == 0 {
            return Err(RoleError::StaleHash {
                current: e.content_hash,
            });
        }
        let detail = admin_text!(
            "role {}; accepted by {}; hash {}",
            Identifier::new(&e.role),
            Identifier::new(actor),
            Identifier::new(&e.content_hash)
        );
        audit_proposal(&mut tx, by, "role_memory.accept", id, &detail).await?;
        tx.commit().await?;
        self.get(org, id, now).await
    }

    /// Confirm an accepted proposal: `actor` is not the one who accepted it
    /// and holds its role at this moment; the text is the one accepted. It
    /// becomes an active record of the role (a rubric supersedes the
    /// previous version). Audited `role_memory.confirm`, naming both people.
    pub async fn confirm(&self, decision: &ProposalDecision<'_>) -> Result<RoleEntry> {
        let ProposalDecision { id, seen, by } = *decision;
        let (org, actor, now) = (by.org, by.actor, by.at);
        let (e, accepted_hash) = self.row(org, id, now).await?;
        self.refuse_if_expired(&e, now).await?;
        if e.status != ProposalStatus::Accepted {
            return Err(e.wrong_state(ProposalStatus::Accepted.as_str()));
        }
        let accepted_by = e.accepted_by.clone().unwrap_or_default();
        if accepted_by == actor {
            return Err(RoleError::SamePerson(accepted_by));
        }
        if !self.holds(org, actor, &e.role).await? {
            return Err(RoleError::NotHolder(actor.to_string(), e.role));
        }
        Self::bound(&e, seen)?;
        if accepted_hash.as_deref() != Some(e.content_hash.as_str()) {
            return Err(RoleError::StaleHash {
                current: e.content_hash,
            });
        }
        let mut tx = crate::store::begin(&self.db.pool).await?;
        let text = "UPDATE role_proposals SET status = $1, confirmed_by = $2, confirmed_at = $3 \
                    WHERE org = $4 AND id = $5 AND status = $6 AND content_hash = $7";
        let q = sql!(
            text,
            ProposalStatus::Confirmed.as_str(),
            actor,
            now,
            org,
            id,
            ProposalStatus::Accepted.as_str(),
            &e.content_hash
        );
        if q.exec(&mut *tx).await? == 0 {
            return Err(RoleError::StaleHash {
                current: e.content_hash,
            });
        }
        let subject = match e.kind {
            RoleKind::Rubric => "rubric".to_string(),
            kind => format!("{}:{}", kind.as_str(), content_hash(&e.content)),
        };
        let rec = NewRecord::said(
            org,
            ANY_AGENT,
            Scope::Role,
            e.kind.as_str(),
            subject,
            &e.content,
            now,
        )
        .owner(Some(e.role.clone()))
        .status(Status::Pending)
        .source(proposal_ref(id))
        .author(Some(e.proposed_by.clone()))
        .on_behalf_of(e.on_behalf_of.clone());
        let record = insert_on(&mut tx, &rec).await?;
        let run_id = proposal_ref(id);
        let run = SubjectRuleRun {
            org,
            id: record,
            cause: "role_curation",
            run_id: &run_id,
            now,
        };
        activate_on(&mut tx, &run).await?;
        let text = "UPDATE role_proposals SET record_id = $1 WHERE org = $2 AND id = $3";
        sql!(text, record, org, id).exec(&mut *tx).await?;
        let detail = admin_text!(
            "role {}; accepted by {}; confirmed by {}; hash {}; record {}",
            Identifier::new(&e.role),
            Identifier::new(&accepted_by),
            Identifier::new(actor),
            Identifier::new(&e.content_hash),
            record
        );
        audit_proposal(&mut tx, by, "role_memory.confirm", id, &detail).await?;
        tx.commit().await?;
        self.db.written();
        self.get(org, id, now).await
    }

    /// Take one of the two decisions on proposal `id`: `accept` or `confirm`.
    pub async fn decide(
        &self,
        step: CurationStep,
        org: &str,
        id: i64,
        actor: &str,
        seen: Option<&str>,
        now: i64,
    ) -> Result<RoleEntry> {
        let by = Act {
            org,
            actor,
            at: now,
        };
        let decision = ProposalDecision { id, seen, by };
        match step {
            CurationStep::Accept => self.accept(&decision).await,
            CurationStep::Confirm => self.confirm(&decision).await,
        }
    }

    /// Change a pending proposal's text: both decisions are reset (it is
    /// `proposed` again). By its proposer, a manager of the role or an
    /// administrator. Audited `role_memory.edit`.
    pub async fn edit(
        &self,
        org: &str,
        id: i64,
        actor: &str,
        content: &str,
        now: i64,
    ) -> Result<RoleEntry> {
        let e = self.get(org, id, now).await?;
        self.refuse_if_expired(&e, now).await?;
        if !matches!(
            e.status,
            ProposalStatus::Proposed | ProposalStatus::Accepted
        ) {
            return Err(e.wrong_state(ProposalStatus::Proposed.as_str()));
        }
        if e.proposed_by != actor && !self.curates(org, actor, &e.role).await? {
            return Err(RoleError::NotManager(actor.to_string(), e.role));
        }
        let content = self.clean(org, content).await?;
        let by = Act {
            org,
            actor,
            at: now,
        };
        let hash = content_hash(&content);
        let mut tx = crate::store::begin(&self.db.pool).await?;
        let text = "UPDATE role_proposals SET content = $1, content_hash = $2, status = $3, \
                    accepted_by = NULL, accepted_hash = NULL, accepted_at = NULL \
                    WHERE org = $4 AND id = $5";
        let q = sql!(
            text,
            &content,
            &hash,
            ProposalStatus::Proposed.as_str(),
            org,
            id
        );
        q.exec(&mut *tx).await?;
        let detail = admin_text!(
            "role {}; hash {} -> {}; decisions reset",
            Identifier::new(&e.role),
            Identifier::new(&e.content_hash),
            Identifier::new(&hash)
        );
        audit_proposal(&mut tx, by, "role_memory.edit", id, &detail).await?;
        tx.commit().await?;
        self.get(org, id, now).await
    }

    /// Retire an active entry: its record is superseded with a revision row
    /// (undone by `Records::undo_revision`, which makes it active again).
    /// Audited `role_memory.retire`. The revision's id.
    pub async fn retire(&self, org: &str, id: i64, actor: &str, now: i64) -> Result<i64> {
        let e = self.get(org, id, now).await?;
        let (Some(record), true) = (e.record_id, e.is_active()) else {
            return Err(RoleError::WrongState {
                id,
                status: if e.status == ProposalStatus::Confirmed {
                    "retired"
                } else {
                    e.status.as_str()
                },
                expected: "an active entry",
            });
        };
        let mut tx: Transaction<'_, Any> = crate::store::begin(&self.db.pool).await?;
        let text =
            "UPDATE memory_records SET status = $1 WHERE org = $2 AND id = $3 AND status = $4";
        let q = sql!(text, Status::Superseded, org, record, Status::Active);
        if q.exec(&mut *tx).await? == 0 {
            return Err(RoleError::WrongState {
                id,
                status: "retired",
                expected: "an active entry",
            });
        }
        crate::store::fulltext::unindex(&mut tx, record).await?;
        crate::store::vectors::drop_vector(&mut tx, record).await?;
        let run = proposal_ref(id);
        let reason = admin_text!(
            "retired from role {} by {}",
            Identifier::new(&e.role),
            Identifier::new(actor)
        );
        let revision = NewRevision {
            org,
            agent: ANY_AGENT,
            retired_id: record,
            replacing_id: record,
            meta: RevisionMeta {
                via: "role_memory",
                cause: "retire",
                run_id: &run,
                reason: &reason,
                model: None,
                prompt_version: None,
            },
            created_at: now,
        };
        let revision = insert_revision(&mut *tx, &revision).await?;
        let detail = admin_text!(
            "role {}; record {}; revision {}",
            Identifier::new(&e.role),
            record,
            revision
        );
        let by = Act {
            org,
            actor,
            at: now,
        };
        audit_proposal(&mut tx, by, "role_memory.retire", id, &detail).await?;
        tx.commit().await?;
        self.db.written();
        Ok(revision)
    }

    /// The active entries of the organisation's roles (for the team export).
    pub async fn active_entries(&self, org: &str, now: i64) -> Result<Vec<RoleEntry>> {
        let text = format!("{SELECT} WHERE p.org = $1 AND r.status = $2 ORDER BY p.role, p.id");
        let rows: Vec<Row> = sql!(text, org, Status::Active).all(&self.db.pool).await?;
        Ok(rows
            .into_iter()
            .map(|r| r.entry(now).map(|(e, _)| e))
            .collect::<StoreResult<_>>()?)
    }
}
