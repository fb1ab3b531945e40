//! The chat commands of role memory (docs/memory.md, "Roles and role memory"):
//! `/share ID ROLE` proposes one of the speaker's own records to a role
//! they hold; `/role list ROLE` shows a role's proposals and entries to its
//! holders and managers, each with the start of its content hash;
//! `/role accept ID HASH` (a manager of the role) and `/role confirm ID HASH`
//! (another current holder) are the two decisions, each bound to the hash
//! the list showed, so a text edited since is refused. A refusal is said in
//! words; nothing is changed by one.

use crate::asker::Asker;
use crate::error::Result;
use memory::role_memory::{shown_hash, CurationStep, ProposalStatus, RoleEntry, RoleError};
use memory::{Db, Role, Status};

pub struct RoleCommands<'a> {
    pub db: &'a Db,
}

const USAGE: &str =
    "Usage: /share <record id> <role>, /role list <role>, /role accept <id> <hash>, /role confirm <id> <hash> (the hash /role list shows).";

/// One proposal as a line of `/role list`.
fn line(e: &RoleEntry) -> String {
    let state = match (e.status, e.record_status) {
        (ProposalStatus::Confirmed, Some(Status::Active)) => "active",
        (ProposalStatus::Confirmed, _) => "retired",
        (s, _) => s.as_str(),
    };
    let behalf = e
        .on_behalf_of
        .as_deref()
        .map(|p| format!(", on behalf of {p}"))
        .unwrap_or_default();
    format!(
        "\n- #{} {state} {}: {} (proposed by {}{behalf}; hash {})",
        e.id,
        e.kind.as_str(),
        e.content,
        e.proposed_by,
        shown_hash(&e.content_hash)
    )
}

/// What a refusal says in chat (a store failure is an error, not a refusal).
fn said(r: std::result::Result<String, RoleError>) -> Result<String> {
    match r {
        Ok(s) => Ok(s),
        Err(RoleError::Store(e)) => Err(e.into()),
        Err(e) => Ok(format!("Refused: {e}.")),
    }
}

impl RoleCommands<'_> {
    pub async fn run(&self, t: &Asker<'_>, first: &str, words: &[&str]) -> Result<String> {
        let Some(user) = t.principal.user_id() else {
            return Ok("Role memory is for paired people. Send /pair to request access.".into());
        };
        let id = |w: Option<&&str>| w.and_then(|w| w.trim_start_matches('#').parse::<i64>().ok());
        let r = self.db.role_memory();
        match (first, words) {
            ("/share", [record, role]) => {
                let Some(record) = id(Some(record)) else {
                    return Ok(USAGE.into());
                };
                said(
                    r.share(t.org, record, role, user, t.on_behalf_of, t.now)
                        .await
                        .map(|e| {
                            format!(
                                "Proposed to role {role} (proposal #{}): a manager of the role accepts it and another holder confirms it before anyone reads it.",
                                e.id
                            )
                        }),
                )
            }
            ("/role", [sub, role]) if sub.eq_ignore_ascii_case("list") => {
                said(self.list(t, user, role).await)
            }
            ("/role", [sub, rest @ ..]) => {
                let step = match sub.to_ascii_lowercase().as_str() {
                    "accept" => CurationStep::Accept,
                    "confirm" => CurationStep::Confirm,
                    _ => return Ok(USAGE.into()),
                };
                match rest {
                    [n, hash] => self.decide(t, user, id(Some(n)), hash, step).await,
                    [n] => Ok(format!(
                        "A decision names the hash /role list showed you: /role {step} {} HASH.",
                        n.trim_start_matches('#')
                    )),
                    _ => Ok(USAGE.into()),
                }
            }
            _ => Ok(USAGE.into()),
        }
    }

    /// `/role accept|confirm <n> <hash>` as `user`, bound to the hash shown:
    /// what was decided, and what comes next.
    async fn decide(
        &self,
        t: &Asker<'_>,
        user: &str,
        n: Option<i64>,
        hash: &str,
        step: CurationStep,
    ) -> Result<String> {
        let Some(n) = n else {
            return Ok(USAGE.into());
        };
        let r = self.db.role_memory();
        let decided = r.decide(step, t.org, n, user, Some(hash), t.now).await;
        if let Err(RoleError::StaleHash { .. }) = decided {
            let now = r.get(t.org, n, t.now).await.map(|e| e.content);
            let now = now
                .map(|c| format!(" It now reads: \"{c}\"."))
                .unwrap_or_default();
            return Ok(format!(
                "Refused: proposal #{n} changed since it was shown to you (or the hash is not the one /role list shows); nothing was {}.{now} Look again with /role list and decide on what you read.",
                match step {
                    CurationStep::Accept => "accepted",
                    CurationStep::Confirm => "confirmed",
                }
            ));
        }
        said(decided.map(|e| match step {
            CurationStep::Accept => format!(
                "Accepted #{} for role {}: another holder of the role confirms it with /role confirm {} {}.",
                e.id,
                e.role,
                e.id,
                shown_hash(&e.content_hash)
            ),
            CurationStep::Confirm => format!(
                "Confirmed #{}: everyone in role {} reads it from their next message.",
                e.id, e.role
            ),
        }))
    }

    async fn list(
        &self,
        t: &Asker<'_>,
        user: &str,
        role: &str,
    ) -> std::result::Result<String, RoleError> {
        memory::role_memory::valid_role(role)?;
        let r = self.db.role_memory();
        let may = t.principal.role() == Some(Role::Admin)
            || r.holds(t.org, user, role).await?
            || r.manages(t.org, user, role).await?;
        if !may {
            return Err(RoleError::NotHolder(user.to_string(), role.to_string()));
        }
        let entries = r.list(t.org, role, t.now).await?;
        if entries.is_empty() {
            return Ok(format!("Role {role} has no proposals or entries yet."));
        }
        let mut out = format!("Role {role}:");
        for e in &entries {
            out.push_str(&line(e));
        }
        Ok(out)
    }
}
