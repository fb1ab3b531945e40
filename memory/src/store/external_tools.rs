//! External tools' listings (`external_tool::ExternalTool`) and the calls
//! waiting for a speaker's yes. Every change of a listing's status is audited
//! in its own transaction.

use super::audit::Act;
use super::{Db, Result};
use crate::admin_text::{AdminText, Identifier, Identifiers, OrgWords};
use crate::external_tool::{ExternalTool, ExternalToolRefusal, ExternalToolStatus};

const LISTING: &str = "SELECT id, org, agent, server, name, description, input_schema, hash, \
     status, finding, roles, confirm, runs, calls_per_minute, identity, decided_by, decided_at, note, created_at \
     FROM external_tools";
const CALL: &str = "SELECT id, org, agent, conversation, sender, tool_id, arguments, \
     arguments_hash, batch, expires_at FROM external_tool_calls";

/// External tools of every agent of an organisation (`db.external_tools()`).
#[derive(Clone, Copy)]
pub struct ExternalTools<'a> {
    pub(super) db: &'a Db,
}

#[derive(sqlx::FromRow)]
struct Row {
    id: i64,
    org: String,
    agent: String,
    server: String,
    name: String,
    description: String,
    input_schema: String,
    hash: String,
    #[sqlx(try_from = "String")]
    status: ExternalToolStatus,
    finding: String,
    roles: String,
    confirm: i64,
    runs: i64,
    calls_per_minute: i64,
    identity: i64,
    decided_by: Option<String>,
    decided_at: Option<i64>,
    note: String,
    created_at: i64,
}

impl From<Row> for ExternalTool {
    fn from(r: Row) -> Self {
        ExternalTool {
            id: r.id,
            org: r.org,
            agent: r.agent,
            server: r.server,
            name: r.name,
            description: r.description,
            input_schema: r.input_schema,
            hash: r.hash,
            status: r.status,
            finding: r.finding,
            roles: r.roles,
            confirm: r.confirm != 0,
            runs: r.runs != 0,
            calls_per_minute: u32::try_from(r.calls_per_minute).unwrap_or(0),
            identity: r.identity != 0,
            decided_by: r.decided_by,
            decided_at: r.decided_at,
            note: r.note,
            created_at: r.created_at,
        }
    }
}

/// A tool as its server lists it now.
#[derive(Debug, Clone)]
pub struct ToolListing<'a> {
    pub org: &'a str,
    pub agent: &'a str,
    pub server: &'a str,
    pub name: &'a str,
    pub description: &'a str,
    /// The input schema as JSON text.
    pub input_schema: &'a str,
    pub at: i64,
}

/// What an approval says: who may be offered the tool, whether each call
/// waits for the speaker's yes, whether runs may call it, and its rate.
#[derive(Debug, Clone)]
pub struct ToolGrant<'a> {
    pub id: i64,
    /// The hash (or 8 characters of it at least) of the listing shown.
    pub hash: &'a str,
    pub roles: &'a [String],
    pub confirm: bool,
    /// Automated runs may call it too (docs/runs.md).
    pub runs: bool,
    /// Calls of it a minute, all speakers together; `None`: `[mcp] tool_calls_per_minute`.
    pub calls_per_minute: Option<u32>,
    /// Each call carries the organisation and the speaker's stored id to the
    /// server (MCP `_meta`); off: neither leaves steward.
    pub identity: bool,
}

/// A decision's answer: the listing as it stands after, or why it was refused.
pub type ToolDecided = std::result::Result<ExternalTool, ExternalToolRefusal>;

/// A call that waits for its speaker's yes.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct WaitingCall {
    pub id: i64,
    pub org: String,
    pub agent: String,
    pub conversation: String,
    pub sender: String,
    pub tool_id: i64,
    /// The arguments shown, JSON text: the call runs with exactly these.
    pub arguments: String,
    pub arguments_hash: String,
    /// The message the question was asked at.
    pub batch: i64,
    pub expires_at: i64,
}

/// A call about to be asked.
#[derive(Debug, Clone)]
pub struct NewWaitingCall<'a> {
    pub org: &'a str,
    pub agent: &'a str,
    pub conversation: &'a str,
    pub sender: &'a str,
    pub tool_id: i64,
    pub arguments: &'a str,
    pub arguments_hash: &'a str,
    pub batch: i64,
    pub expires_at: i64,
    pub at: i64,
}

named_enum! {
    /// What became of a call that waited for a yes. Stored by name.
    pub enum WaitingOutcome {
        Asked,
        Run,
        Declined,
        Lapsed,
    }
}

/// Suspend every approved or proposed listing of `l`'s tool but the one
/// with `hash`: a server lists one version of a tool at a time.
async fn suspend_others(
    tx: &mut sqlx::Transaction<'static, sqlx::Any>,
    l: &ToolListing<'_>,
    hash: &str,
) -> Result<u64> {
    let text = "UPDATE external_tools SET status = $1, note = $2 WHERE org = $3 AND agent = $4 \
         AND server = $5 AND name = $6 AND hash <> $7 AND status IN ($8, $9)";
    sql!(
        text,
        ExternalToolStatus::Suspended,
        "changed by its server: the listing it lists now waits for approval",
        l.org,
        l.agent,
        l.server,
        l.name,
        hash,
        ExternalToolStatus::Approved,
        ExternalToolStatus::Proposed
    )
    .exec(&mut **tx)
    .await
}

fn target(t: &ExternalTool) -> String {
    format!("tool:{}/{}", t.server, t.name)
}

impl ExternalTools<'_> {
    /// Keep what a server lists now: a listing seen before is that listing;
    /// a new one is a proposal (with what the screen found in its
    /// description), and any approved or proposed listing of the same tool
    /// with another hash is suspended — a changed tool waits for a new
    /// approval. Audited as `tool.listed` and `tool.changed`.
    pub async fn observe(&self, l: &ToolListing<'_>) -> Result<ExternalTool> {
        let hash =
            crate::external_tool::listing_hash(l.server, l.name, l.description, l.input_schema);
        let text = format!(
            "{LISTING} WHERE org = $1 AND agent = $2 AND server = $3 AND name = $4 AND hash = $5"
        );
        let known: Option<Row> = sql!(text, l.org, l.agent, l.server, l.name, &hash)
            .opt(&self.db.pool)
            .await?;
        if let Some(row) = known {
            // A server back at a listing seen before: any other approved one
            // of the tool is not what it lists now.
            let mut tx = super::begin(&self.db.pool).await?;
            let changed = suspend_others(&mut tx, l, &hash).await?;
            if changed > 0 {
                let by = Act {
                    org: l.org,
                    actor: "steward",
                    at: l.at,
                };
                let what = format!("tool:{}/{}", l.server, l.name);
                by.audit(
                    &mut *tx,
                    "tool.changed",
                    &what,
                    &AdminText::fixed("earlier listing suspended"),
                )
                .await?;
            }
            tx.commit().await?;
            return Ok(row.into());
        }
        let mut tx = super::begin(&self.db.pool).await?;
        let finding = crate::external_tool::screen_description(l.description).unwrap_or_default();
        let text = "INSERT INTO external_tools (org, agent, server, name, description, \
             input_schema, hash, status, finding, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING";
        sql!(
            text,
            l.org,
            l.agent,
            l.server,
            l.name,
            l.description,
            l.input_schema,
            &hash,
            ExternalToolStatus::Proposed,
            &finding,
            l.at
        )
        .exec(&mut *tx)
        .await?;
        let changed = suspend_others(&mut tx, l, &hash).await?;
        let by = Act {
            org: l.org,
            actor: "steward",
            at: l.at,
        };
        let what = format!("tool:{}/{}", l.server, l.name);
        let flagged = if finding.is_empty() {
            ""
        } else {
            "; the screen flagged its description"
        };
        let detail = admin_text!("hash {}{}", Identifier::new(&hash), flagged);
        by.audit(&mut *tx, "tool.listed", &what, &detail).await?;
        if changed > 0 {
            by.audit(
                &mut *tx,
                "tool.changed",
                &what,
                &AdminText::fixed("earlier listing suspended"),
            )
            .await?;
        }
        tx.commit().await?;
        let text = format!(
            "{LISTING} WHERE org = $1 AND agent = $2 AND server = $3 AND name = $4 AND hash = $5"
        );
        let row: Row = sql!(text, l.org, l.agent, l.server, l.name, &hash)
            .found(&self.db.pool, what)
            .await?;
        Ok(row.into())
    }

    /// Every listing of an organisation, newest first (of one status, when given).
    pub async fn list(
        &self,
        org: &str,
        status: Option<ExternalToolStatus>,
    ) -> Result<Vec<ExternalTool>> {
        let q = sql!(format!("{LISTING} WHERE org = $1"), org)
            .and_eq("status", status)
            .push(" ORDER BY id DESC");
        let rows: Vec<Row> = q.all(&self.db.pool).await?;
        Ok(rows.into_iter().map(Into::into).collect())
    }

    /// The approved listings of an agent: what a turn may offer.
    pub async fn approved(&self, org: &str, agent: &str) -> Result<Vec<ExternalTool>> {
        let text = format!("{LISTING} WHERE org = $1 AND agent = $2 AND status = $3 ORDER BY id");
        let rows: Vec<Row> = sql!(text, org, agent, ExternalToolStatus::Approved)
            .all(&self.db.pool)
            .await?;
        Ok(rows.into_iter().map(Into::into).collect())
    }

    /// One listing.
    pub async fn listing(&self, org: &str, id: i64) -> Result<ExternalTool> {
        let text = format!("{LISTING} WHERE org = $1 AND id = $2");
        let row: Row = sql!(text, org, id)
            .found(&self.db.pool, format!("tool listing {id}"))
            .await?;
        Ok(row.into())
    }

    /// Approve a proposed listing, if it is still the one whose hash the
    /// approver saw, for `roles`. The caller checked the approver's
    /// authority (`authz::Action::CurateTools`). Audited as `tool.approve`.
    pub async fn approve(&self, who: Act<'_>, grant: &ToolGrant<'_>) -> Result<ToolDecided> {
        let t = self.listing(who.org, grant.id).await?;
        // A suspended listing is approved again only by its hash, as a proposed one.
        let waiting = [ExternalToolStatus::Proposed, ExternalToolStatus::Suspended];
        if !waiting.contains(&t.status) {
            return Ok(Err(ExternalToolRefusal::NotProposed(t.id, t.status)));
        }
        let named = grant.hash.to_ascii_lowercase();
        if named.len() < 8 || !t.hash.starts_with(&named) {
            return Ok(Err(ExternalToolRefusal::StaleHash {
                id: t.id,
                hash: t.hash,
            }));
        }
        let roles = match crate::external_tool::check_roles(grant.roles) {
            Ok(r) => r,
            Err(refusal) => return Ok(Err(refusal)),
        };
        if grant.runs && grant.confirm {
            return Ok(Err(ExternalToolRefusal::ConfirmedForRuns));
        }
        if grant
            .calls_per_minute
            .is_some_and(|n| !(1..=100_000).contains(&n))
        {
            return Ok(Err(ExternalToolRefusal::BadRate));
        }
        let mut tx = super::begin(&self.db.pool).await?;
        let text = "UPDATE external_tools SET status = $1, roles = $2, confirm = $3, runs = $4, \
             calls_per_minute = $5, identity = $6, decided_by = $7, decided_at = $8, note = '' \
             WHERE org = $9 AND id = $10 AND status = $11";
        let moved = sql!(
            text,
            ExternalToolStatus::Approved,
            &roles,
            i64::from(grant.confirm),
            i64::from(grant.runs),
            i64::from(grant.calls_per_minute.unwrap_or(0)),
            i64::from(grant.identity),
            who.actor,
            who.at,
            who.org,
            t.id,
            t.status
        )
        .exec(&mut *tx)
        .await?;
        if moved == 0 {
            // Another decision came first.
            let now = self.listing(who.org, t.id).await?;
            return Ok(Err(ExternalToolRefusal::NotProposed(now.id, now.status)));
        }
        // One approved listing of a tool at a time.
        let text =
            "UPDATE external_tools SET status = $1, note = $2 WHERE org = $3 AND agent = $4 \
             AND server = $5 AND name = $6 AND id <> $7 AND status = $8";
        sql!(
            text,
            ExternalToolStatus::Suspended,
            format!("replaced by listing {}", t.id),
            who.org,
            &t.agent,
            &t.server,
            &t.name,
            t.id,
            ExternalToolStatus::Approved
        )
        .exec(&mut *tx)
        .await?;
        let confirmed = if grant.confirm {
            ", each call confirmed"
        } else {
            ""
        };
        let runs = if grant.runs { ", and runs" } else { "" };
        let identity = if grant.identity {
            ", calls carry the organisation and the speaker's id"
        } else {
            ""
        };
        // 0: `[mcp] tool_calls_per_minute`.
        let rate = grant.calls_per_minute.unwrap_or(0);
        let detail = admin_text!(
            "listing {} (hash {}) for {}{}{}{}; calls a minute: {}",
            t.id,
            Identifier::new(&t.hash),
            Identifiers::new(grant.roles),
            runs,
            confirmed,
            identity,
            rate
        );
        who.audit(&mut *tx, "tool.approve", &target(&t), &detail)
            .await?;
        tx.commit().await?;
        Ok(Ok(self.listing(who.org, t.id).await?))
    }

    /// Decline a proposed listing. Audited as `tool.reject`.
    pub async fn reject(&self, who: Act<'_>, id: i64) -> Result<ToolDecided> {
        self.decide(who, id, ExternalToolStatus::Rejected, "tool.reject", "")
            .await
    }

    /// Take an approved or proposed listing out of use. Audited as `tool.suspend`.
    pub async fn suspend(&self, who: Act<'_>, id: i64, why: &str) -> Result<ToolDecided> {
        self.decide(who, id, ExternalToolStatus::Suspended, "tool.suspend", why)
            .await
    }

    async fn decide(
        &self,
        who: Act<'_>,
        id: i64,
        to: ExternalToolStatus,
        action: &str,
        why: &str,
    ) -> Result<ToolDecided> {
        let t = self.listing(who.org, id).await?;
        let allowed = match to {
            ExternalToolStatus::Rejected => t.status == ExternalToolStatus::Proposed,
            _ => matches!(
                t.status,
                ExternalToolStatus::Proposed | ExternalToolStatus::Approved
            ),
        };
        if !allowed {
            return Ok(Err(match to {
                ExternalToolStatus::Rejected => ExternalToolRefusal::NotProposed(id, t.status),
                _ => ExternalToolRefusal::NotInUse(id, t.status),
            }));
        }
        let mut tx = super::begin(&self.db.pool).await?;
        let text = "UPDATE external_tools SET status = $1, decided_by = $2, decided_at = $3, \
             note = $4 WHERE org = $5 AND id = $6";
        sql!(text, to, who.actor, who.at, why, who.org, id)
            .exec(&mut *tx)
            .await?;
        // The reason is an administrator's own words (or steward's fixed ones).
        let detail = admin_text!(
            "listing {} (hash {}): {}",
            id,
            Identifier::new(&t.hash),
            OrgWords::administrators_words(why)
        );
        who.audit(&mut *tx, action, &target(&t), &detail).await?;
        tx.commit().await?;
        Ok(Ok(self.listing(who.org, id).await?))
    }

    /// Keep a call that waits for its speaker's yes.
    pub async fn ask(&self, c: &NewWaitingCall<'_>) -> Result<i64> {
        let text = "INSERT INTO external_tool_calls (org, agent, conversation, sender, tool_id, \
             arguments, arguments_hash, batch, status, expires_at, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id";
        let (id,): (i64,) = sql!(
            text,
            c.org,
            c.agent,
            c.conversation,
            c.sender,
            c.tool_id,
            c.arguments,
            c.arguments_hash,
            c.batch,
            WaitingOutcome::Asked,
            c.expires_at,
            c.at
        )
        .one(&self.db.pool)
        .await?;
        Ok(id)
    }

    /// The calls `sender` was asked about here and has not answered, unexpired, newest first.
    pub async fn waiting(
        &self,
        org: &str,
        agent: &str,
        conversation: &str,
        sender: &str,
        now: i64,
    ) -> Result<Vec<WaitingCall>> {
        let text = format!(
            "{CALL} WHERE org = $1 AND agent = $2 AND conversation = $3 AND sender = $4 \
             AND status = $5 AND expires_at > $6 ORDER BY id DESC"
        );
        sql!(
            text,
            org,
            agent,
            conversation,
            sender,
            WaitingOutcome::Asked,
            now
        )
        .all(&self.db.pool)
        .await
    }

    /// Settle a waiting call; false when it was settled already (a
    /// replica or a retry came first).
    pub async fn settle(&self, org: &str, id: i64, outcome: WaitingOutcome) -> Result<bool> {
        let text =
            "UPDATE external_tool_calls SET status = $1 WHERE org = $2 AND id = $3 AND status = $4";
        let moved = sql!(text, outcome, org, id, WaitingOutcome::Asked)
            .exec(&self.db.pool)
            .await?;
        Ok(moved > 0)
    }
}
