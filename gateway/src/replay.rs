//! `steward replay`: a JSON Lines transcript (one `Event` an object; e.g.
//! `tests/fixtures/teach_and_serve.jsonl`) through the real turn loop on a
//! fresh in-memory database. Every line is parsed and checked before the first
//! one runs, so a bad transcript applies nothing. The input events and the
//! `--json` output (`ReplayOutput`) are a contract: keep them stable.

use crate::clock::ManualClock;
use crate::config::{Deliver, Procedure, RunTarget};
use crate::runs::{RunError, Runner, Start};
use crate::services::Services;
use crate::Config;
use adapters::{ConversationKind, Inbound};
use chrono::{DateTime, TimeZone, Utc};
use memory::store::RecordFilter;
use memory::{Db, MessageAuthor, Principal, SystemPrincipal};
use serde::Deserialize;
use std::sync::Arc;

mod mcp;
mod output;
mod transcript;

pub use output::{MemoryRow, ReplayOutput, ReplyRow, RevisionRow, SkillRow};
use transcript::{
    latest_time, parse, ConversationEvent, CurateEvent, MsgEvent, PairEvent, ReviewEvent,
    RolesEvent, RunEvent, SystemEvent, ToolEvent, UndoEvent,
};

#[derive(Debug, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
enum Event {
    Pair(PairEvent),
    Msg(MsgEvent),
    System(SystemEvent),
    /// An automated run, as `steward serve` starts one (a schedule's slot, a
    /// webhook delivery, a skill run on demand), delivered nowhere.
    Run(RunEvent),
    Tool(ToolEvent),
    Trim(ConversationEvent),
    Relearn(ConversationEvent),
    Undo(UndoEvent),
    Review(ReviewEvent),
    /// Work roles and `role_memory.manage` grants, as an admin sets them.
    Roles(RolesEvent),
    /// A role-memory entry through both curation steps: proposed, accepted
    /// by a manager, confirmed by another current holder.
    Curate(CurateEvent),
    /// An MCP server the replay starts before the first line (`replay/mcp.rs`).
    Mcp(mcp::McpEvent),
    /// An external tool's listing approved, as `steward tools approve` does.
    #[serde(rename = "approve_tool")]
    ApproveTool(mcp::ApproveToolEvent),
}

impl Event {
    fn name(&self) -> &'static str {
        match self {
            Event::Pair(_) => "pair",
            Event::Msg(_) => "msg",
            Event::System(_) => "system",
            Event::Run(_) => "run",
            Event::Tool(_) => "tool",
            Event::Trim(_) => "trim",
            Event::Relearn(_) => "relearn",
            Event::Undo(_) => "undo",
            Event::Review(_) => "review",
            Event::Roles(_) => "roles",
            Event::Curate(_) => "curate",
            Event::Mcp(_) => "mcp",
            Event::ApproveTool(_) => "approve_tool",
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("line {line}: {reason}")]
    Line { line: usize, reason: String },
    #[error(transparent)]
    Store(#[from] memory::StoreError),
    #[error(transparent)]
    Turn(#[from] crate::turn::TurnError),
    #[error(transparent)]
    Pairing(#[from] pairing::PairingError),
    #[error(transparent)]
    Roles(#[from] memory::store::role_memory::RoleError),
    #[error("{0} is not paired")]
    NotPaired(String),
}

impl ReplayError {
    /// This error as the failure of transcript line `line` (kept when it names one).
    fn at_line(self, line: usize) -> ReplayError {
        match self {
            ReplayError::Line { .. } => self,
            other => ReplayError::Line {
                line,
                reason: other.to_string(),
            },
        }
    }
}

/// The user id of a paired identity (`discord:222`), or the line fails.
async fn paired_id(services: &Services, org: &str, identity: &str) -> Result<String, ReplayError> {
    match services.pairing().resolve(org, identity).await? {
        Some(u) => Ok(u.user_id),
        None => Err(ReplayError::NotPaired(identity.to_string())),
    }
}

/// Run a transcript on a fresh in-memory database.
pub async fn replay(input: &str, mut cfg: Config) -> Result<ReplayOutput, ReplayError> {
    let events = parse(input)?;
    cfg.database.url = "sqlite::memory:".into();
    // The `mcp` lines' tools files live as long as the replay.
    let dir = tempfile::tempdir().map_err(|e| ReplayError::Line {
        line: 0,
        reason: format!("no temporary directory for MCP servers: {e}"),
    })?;
    mcp::configure(&mut cfg, dir.path(), &events)?;
    let db = Db::in_memory().await?;
    let mut services = crate::with_db(db, cfg).with_clock(Arc::new(ManualClock::default()));
    if !services.config().mcp.servers.is_empty() {
        services = services.with_mcp().await;
    }
    let out = replay_events(&services, events).await;
    if let Some(hub) = services.mcp() {
        hub.stop().await;
    }
    out
}

/// Run a transcript on the database `services` holds (the storage suite uses this
/// on PostgreSQL). Each event's time is handed to the loop's clock
/// (`Clock::follow`): on a [`ManualClock`] the loop sees only the
/// transcript's time, whatever the day it is replayed.
pub async fn replay_on(services: &Services, input: &str) -> Result<ReplayOutput, ReplayError> {
    let events = parse(input)?;
    replay_events(services, events).await
}

async fn replay_events(
    services: &Services,
    events: Vec<(usize, Event)>,
) -> Result<ReplayOutput, ReplayError> {
    let mut replayer = Replayer::new(services);
    for (line, event) in events {
        let started = std::time::Instant::now();
        let what = event.name();
        // A failure names the line it came from, whatever failed.
        replayer
            .apply(line, event)
            .await
            .map_err(|e| e.at_line(line))?;
        // Per-event timing for evaluation scripts (`STEWARD_LOG=steward=info`).
        tracing::info!(
            line,
            event = what,
            ms = started.elapsed().as_millis() as u64,
            "replay event"
        );
    }
    replayer.output().await
}

/// A replay under way: the organisations it touched, the replies so far, and
/// the transcript's clock.
struct Replayer<'s> {
    services: &'s Services,
    default_org: String,
    default_agent: String,
    clock: DateTime<Utc>,
    orgs: Vec<String>,
    replies: Vec<ReplyRow>,
}

impl<'s> Replayer<'s> {
    fn new(services: &'s Services) -> Self {
        let default_org = services.config().server.org.clone();
        Replayer {
            services,
            default_agent: services.config().server.agent.clone(),
            clock: Utc
                .with_ymd_and_hms(2026, 1, 1, 0, 0, 0)
                .single()
                .unwrap_or_default(),
            orgs: vec![default_org.clone()],
            default_org,
            replies: Vec::new(),
        }
    }

    fn org_of(&self, o: &Option<String>) -> String {
        o.clone().unwrap_or_else(|| self.default_org.clone())
    }

    fn agent_of(&self, a: &Option<String>) -> String {
        a.clone().unwrap_or_else(|| self.default_agent.clone())
    }

    /// The event's time; one without a time comes a second after the one
    /// before, never past the latest time. The loop's clock follows it.
    fn tick(&mut self, at: &Option<DateTime<Utc>>) -> DateTime<Utc> {
        self.clock =
            at.unwrap_or_else(|| (self.clock + chrono::Duration::seconds(1)).min(latest_time()));
        self.services.clock().follow(self.clock.timestamp_millis());
        self.clock
    }

    async fn apply(&mut self, line: usize, event: Event) -> Result<(), ReplayError> {
        match event {
            Event::Pair(p) => self.pair(p).await,
            Event::Msg(m) => self.message(line, m).await,
            Event::System(s) => self.system(line, s).await,
            Event::Run(r) => self.run(line, r).await,
            Event::Tool(t) => self.tool(line, t).await,
            Event::Roles(r) => self.roles(r).await,
            Event::Curate(c) => self.curate(c).await,
            Event::Undo(u) => {
                let org = self.org_of(&u.org);
                let at = self.tick(&None).timestamp_millis();
                self.services
                    .db()
                    .records()
                    .undo_revision(&org, u.revision, "replay", at)
                    .await?;
                Ok(())
            }
            Event::Review(r) => self.review(line, r).await,
            Event::Trim(t) => {
                let org = self.org_of(&t.org);
                let at = self.tick(&None).timestamp_millis();
                self.services
                    .lifecycle()
                    .trim_now(&org, &self.agent_of(&t.agent), &t.conversation, at)
                    .await?;
                self.orgs.push(org);
                Ok(())
            }
            Event::Relearn(t) => self.relearn(line, t).await,
            // Started before the first line (`replay`).
            Event::Mcp(_) => Ok(()),
            Event::ApproveTool(a) => self.approve_tool(line, a).await,
        }
    }

    async fn pair(&mut self, p: PairEvent) -> Result<(), ReplayError> {
        let org = self.org_of(&p.org);
        let at = self.tick(&None).timestamp_millis();
        let stored = format!("{}:{}", p.channel, p.user);
        let name = p.name.clone().unwrap_or_else(|| stored.clone());
        self.services
            .pairing()
            .add_user(&org, &stored, &name, p.role, "replay", at)
            .await?;
        self.orgs.push(org);
        Ok(())
    }

    async fn message(&mut self, line: usize, m: MsgEvent) -> Result<(), ReplayError> {
        let org = self.org_of(&m.org);
        let msg = Inbound {
            org: org.clone(),
            agent: self.agent_of(&m.agent),
            channel: m.channel.clone(),
            conversation: m.conversation.clone(),
            kind: m.kind,
            sender: m.sender.as_ref().map(|s| format!("{}:{s}", m.channel)),
            sender_name: m.name.clone().or(m.sender.clone()).unwrap_or_default(),
            text: m.text.clone(),
            platform_id: m.id.clone(),
            at: self.tick(&m.at),
            mentioned: m.mention,
            answer: None,
            on_behalf_of: None,
        };
        let replies = self.services.turns().handle(&msg).await?;
        self.replies
            .extend(replies.into_iter().map(ReplyRow::of(line)));
        self.orgs.push(org);
        Ok(())
    }

    async fn system(&mut self, line: usize, s: SystemEvent) -> Result<(), ReplayError> {
        let org = self.org_of(&s.org);
        let who = SystemPrincipal::parse(&s.principal).ok_or(ReplayError::Line {
            line,
            reason: "unknown system principal".into(),
        })?;
        let msg = Inbound {
            org: org.clone(),
            agent: self.agent_of(&s.agent),
            channel: "system".into(),
            conversation: s.conversation.clone(),
            kind: ConversationKind::Direct,
            sender: None,
            sender_name: s.principal.clone(),
            text: s.text.clone(),
            platform_id: None,
            at: self.tick(&s.at),
            mentioned: true,
            answer: None,
            on_behalf_of: None,
        };
        let replies = self.services.turns().system_turn(&msg, who).await?;
        self.replies
            .extend(replies.into_iter().map(ReplyRow::of(line)));
        self.orgs.push(org);
        Ok(())
    }

    async fn run(&mut self, line: usize, r: RunEvent) -> Result<(), ReplayError> {
        let org = self.org_of(&r.org);
        self.tick(&r.at);
        let target = RunTarget {
            name: r.name.clone(),
            org: org.clone(),
            agent: self.agent_of(&r.agent),
            procedure: match (&r.skill, &r.text) {
                (Some(slug), _) => Procedure::Skill(slug.clone()),
                (None, text) => Procedure::Text(text.clone().unwrap_or_default()),
            },
            deliver: Deliver::None,
        };
        let runner = Runner::new(self.services);
        match runner.prepare(&target, r.trigger).await {
            Err(RunError::Store(e)) => return Err(e.into()),
            Err(refused) => self.replies.push(ReplyRow {
                conversation: format!("run:{}", r.name),
                text: format!("Refused: {refused}"),
                line,
            }),
            Ok(prepared) => {
                let start = Start {
                    by: "replay".into(),
                    payload: r.payload.clone(),
                };
                let run = runner.run_now(&prepared, &start).await?;
                let lines = runner.lines(&run).await?;
                self.replies.extend(
                    lines
                        .into_iter()
                        .filter(|m| m.written_by() == MessageAuthor::Agent)
                        .map(|m| ReplyRow {
                            conversation: run.conversation.clone(),
                            text: m.text,
                            line,
                        }),
                );
            }
        }
        self.orgs.push(org);
        Ok(())
    }

    async fn tool(&mut self, line: usize, t: ToolEvent) -> Result<(), ReplayError> {
        let org = self.org_of(&t.org);
        let at = self.tick(&t.at).timestamp_millis();
        let principal = match SystemPrincipal::parse(&t.as_) {
            Some(sp) => Principal::System(sp),
            None => match self.services.pairing().resolve(&org, &t.as_).await? {
                Some(u) => Principal::Human {
                    user_id: u.user_id,
                    name: u.name,
                    role: u.role,
                },
                None => Principal::Unpaired,
            },
        };
        let outcome = self
            .services
            .learning()
            .memory_write(
                &org,
                &self.agent_of(&t.agent),
                &principal,
                &t.scope,
                &t.content,
                at,
            )
            .await?;
        self.replies.push(ReplyRow {
            conversation: format!("tool:{}", t.name),
            text: outcome.unwrap_or_else(|refusal| format!("Refused: {refusal}")),
            line,
        });
        self.orgs.push(org);
        Ok(())
    }

    async fn roles(&mut self, r: RolesEvent) -> Result<(), ReplayError> {
        use memory::role_memory::{Permission, RoleChange};
        let org = self.org_of(&r.org);
        let at = self.tick(&None).timestamp_millis();
        let user = paired_id(self.services, &org, &r.as_).await?;
        let roles = self.services.db().role_memory();
        let changes = (r.add.iter().map(|role| RoleChange::Add(role)))
            .chain(r.remove.iter().map(|role| RoleChange::Remove(role)))
            .chain(
                r.grant
                    .iter()
                    .map(|role| RoleChange::Grant(Permission::RoleMemoryManage, role)),
            );
        for change in changes {
            roles.change(&org, &user, change, "replay", at).await?;
        }
        Ok(())
    }

    async fn curate(&mut self, c: CurateEvent) -> Result<(), ReplayError> {
        use memory::role_memory::CurationStep::{Accept, Confirm};
        let org = self.org_of(&c.org);
        let at = self.tick(&None).timestamp_millis();
        let by = paired_id(self.services, &org, &c.by).await?;
        let accept = paired_id(self.services, &org, &c.accept).await?;
        let confirm = paired_id(self.services, &org, &c.confirm).await?;
        let roles = self.services.db().role_memory();
        let entry = roles
            .propose(&memory::store::role_memory::NewRoleProposal {
                org: &org,
                role: &c.role,
                kind: c.kind,
                content: &c.text,
                proposed_by: &by,
                on_behalf_of: None,
                source_record: None,
                now: at,
            })
            .await?;
        for (step, actor) in [(Accept, &accept), (Confirm, &confirm)] {
            roles.decide(step, &org, entry.id, actor, None, at).await?;
        }
        self.orgs.push(org);
        Ok(())
    }

    async fn review(&mut self, line: usize, r: ReviewEvent) -> Result<(), ReplayError> {
        let org = self.org_of(&r.org);
        let at = self.tick(&None).timestamp_millis();
        let (id, confirm) = match (r.confirm, r.reject) {
            (Some(id), _) => (id, true),
            (_, Some(id)) => (id, false),
            _ => return Ok(()),
        };
        match self
            .services
            .lifecycle()
            .review(&org, id, confirm, "replay", at)
            .await?
        {
            Ok(_) => Ok(()),
            Err(reason) => Err(ReplayError::Line { line, reason }),
        }
    }

    async fn relearn(&mut self, line: usize, t: ConversationEvent) -> Result<(), ReplayError> {
        let org = self.org_of(&t.org);
        let at = self.tick(&None).timestamp_millis();
        let agent = self.agent_of(&t.agent);
        let archives = self
            .services
            .db()
            .conversations()
            .archives(&org, Some(&t.conversation))
            .await?;
        if archives.is_empty() {
            return Err(ReplayError::Line {
                line,
                reason: format!(
                    "conversation {} has no archive to relearn (trim it first)",
                    t.conversation
                ),
            });
        }
        for a in archives.into_iter().filter(|a| a.agent == agent) {
            self.services
                .lifecycle()
                .relearn(&org, a.id, "replay", at)
                .await?;
        }
        self.orgs.push(org);
        Ok(())
    }

    /// The replies, and the memory, revisions and skills of every
    /// organisation the replay touched.
    async fn output(mut self) -> Result<ReplayOutput, ReplayError> {
        self.orgs.sort();
        self.orgs.dedup();
        let services = self.services;
        let mut memory = Vec::new();
        let mut revisions = Vec::new();
        let mut skills = Vec::new();
        for org in &self.orgs {
            skills.extend(
                services
                    .db()
                    .skills()
                    .list(org, None)
                    .await?
                    .into_iter()
                    .map(|r| SkillRow {
                        id: r.id,
                        slug: r.slug,
                        rev: r.rev,
                        status: r.status.to_string(),
                        proposed_by: r.proposed_by,
                        approved_by: r.approved_by,
                        description: r.description,
                        body: r.body,
                    }),
            );
            memory.extend(
                services
                    .db()
                    .records()
                    .list(org, &RecordFilter::default())
                    .await?
                    .into_iter()
                    .map(MemoryRow::from),
            );
            revisions.extend(
                services
                    .db()
                    .records()
                    .revisions(org)
                    .await?
                    .into_iter()
                    .map(RevisionRow::from),
            );
        }
        Ok(ReplayOutput {
            replies: self.replies,
            memory,
            revisions,
            skills,
        })
    }
}

#[cfg(test)]
mod tests;
