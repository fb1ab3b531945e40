//! The vocabulary shared by every crate: roles, authorities, scopes, records.

use derive_more::{Deref, DerefMut};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A paired person's role. Only the pairing store hands these out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(
    feature = "openapi",
    derive(utoipa::ToSchema),
    schema(
        as = RoleName,
        description = "A paired person's role (the schema of `memory::Role`)."
    )
)]
pub enum Role {
    Admin,
    User,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Admin => "admin",
            Role::User => "user",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown role `{0}` (expected `admin` or `user`)")]
pub struct UnknownRole(pub String);

impl FromStr for Role {
    type Err = UnknownRole;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "admin" => Ok(Role::Admin),
            "user" => Ok(Role::User),
            other => Err(UnknownRole(other.to_string())),
        }
    }
}

/// Automated runs. They execute procedures; they are never human admins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SystemPrincipal {
    #[serde(rename = "cron-system")]
    Cron,
    #[serde(rename = "sop-system")]
    Sop,
    #[serde(rename = "webhook-system")]
    Webhook,
    #[serde(rename = "delegated")]
    Delegated,
}

impl SystemPrincipal {
    pub fn as_str(self) -> &'static str {
        match self {
            SystemPrincipal::Cron => "cron-system",
            SystemPrincipal::Sop => "sop-system",
            SystemPrincipal::Webhook => "webhook-system",
            SystemPrincipal::Delegated => "delegated",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "cron-system" => Some(SystemPrincipal::Cron),
            "sop-system" => Some(SystemPrincipal::Sop),
            "webhook-system" => Some(SystemPrincipal::Webhook),
            "delegated" => Some(SystemPrincipal::Delegated),
            _ => None,
        }
    }
}

/// Who is speaking in a turn, as resolved from the pairing store (never from text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Principal {
    /// A paired person: `user_id` is their unified user id.
    Human {
        user_id: String,
        name: String,
        role: Role,
    },
    System(SystemPrincipal),
    /// Let in by policy but not paired: nobody's lines.
    Unpaired,
}

impl Principal {
    pub fn user_id(&self) -> Option<&str> {
        match self {
            Principal::Human { user_id, .. } => Some(user_id),
            _ => None,
        }
    }

    pub fn role(&self) -> Option<Role> {
        match self {
            Principal::Human { role, .. } => Some(*role),
            _ => None,
        }
    }

    /// Who is recorded as having said something: the unified user id, the
    /// system principal's name, or nobody for unpaired senders.
    pub fn author_id(&self) -> Option<String> {
        match self {
            Principal::Human { user_id, .. } => Some(user_id.clone()),
            Principal::System(s) => Some(s.as_str().to_string()),
            Principal::Unpaired => None,
        }
    }

    /// `isHumanAdmin`: the only authority that may author operational knowledge.
    pub fn is_human_admin(&self) -> bool {
        matches!(
            self,
            Principal::Human {
                role: Role::Admin,
                ..
            }
        )
    }
}

named_enum! {
    /// Where a record lives. Serialised names are the replay contract's, and
    /// the database's: queries bind a `Scope`, never its name as text.
    #[cfg_attr(
        feature = "openapi",
        derive(utoipa::ToSchema),
        schema(
            as = ScopeName,
            description = "Where a record lives (the schema of `memory::Scope`)."
        )
    )]
    pub enum Scope {
        /// Individual tier: `org/{org}/agent/{agent}/user/{user}`.
        Personal,
        /// Person tier: `org/{org}/user/{user}`, read by every agent of the org.
        Person,
        /// Operational knowledge of one agent, shared by all its users.
        AgentNotes,
        /// Org-wide policy memory, admin-authored.
        OrgPolicy,
        /// What everyone in a work role shares: `org/{org}/role/{role}`, owned by
        /// the role's name, readable with any agent by the role's current holders.
        Role,
    }
}

impl Scope {
    pub fn parse(s: &str) -> Option<Self> {
        s.parse().ok()
    }

    /// A person's own memory (either tier), owned by them.
    pub fn is_personal(self) -> bool {
        match self {
            Scope::Personal | Scope::Person => true,
            Scope::AgentNotes | Scope::OrgPolicy | Scope::Role => false,
        }
    }
}

named_enum! {
    /// Where a record is in its life. Stored by name, bound as a `Status`.
    #[cfg_attr(
        feature = "openapi",
        derive(utoipa::ToSchema),
        schema(
            as = StatusName,
            description = "A record's status (the schema of `memory::Status`)."
        )
    )]
    pub enum Status {
        Active,
        Superseded,
        Unverified,
        /// A "Remember this?" proposal waiting for yes or no.
        Pending,
        /// Declined by its owner, or rejected in review.
        Rejected,
        Deleted,
    }
}

impl Status {
    pub fn parse(s: &str) -> Option<Self> {
        s.parse().ok()
    }
}

named_enum! {
    /// The record kinds the rules give a meaning to. A record's `kind` is open
    /// text (extractors name others: `identity`, `procedure`, `hostname`, …);
    /// these are the ones a query or a rule singles out.
    pub enum Kind {
        /// How the speaker wants to be served: added to every reply.
        Preference,
        Vocabulary,
        RubricAdjustment,
    }
}

/// The two learning channels, plus tasks (executed, never stored).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ItemChannel {
    Personal,
    Operational,
    Task,
}

/// What an extractor proposes. Soft: the policy decides what happens to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Candidate {
    pub channel: ItemChannel,
    /// e.g. `identity`, `role_claim`, `preference`, `procedure`, `rule`, `hostname`, `fact`, `task`.
    pub kind: String,
    /// Two statements about the same thing share a subject key.
    pub subject: String,
    pub content: String,
}

/// A stored memory record: what was written, and the id it was stored under.
/// Serialized as one flat object (`id` first, then the written fields), the
/// fields read through it as `r.content`. Read from a row by the store
/// (`store::record_row`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deref, DerefMut)]
pub struct MemoryRecord {
    pub id: i64,
    #[serde(flatten)]
    #[deref]
    #[deref_mut]
    pub written: NewRecord,
}

impl MemoryRecord {
    /// Whether this record is of `kind`.
    pub fn is_kind(&self, kind: Kind) -> bool {
        self.kind == kind.as_str()
    }

    /// Both active, in one place (agent, scope, owner), on one subject, saying
    /// different things: two truths where the subject rule keeps one (after an
    /// undo brought the older back beside the newer).
    pub fn disagrees_with(&self, other: &MemoryRecord) -> bool {
        self.id != other.id
            && self.status == Status::Active
            && other.status == Status::Active
            && (
                self.org.as_str(),
                self.agent.as_str(),
                self.scope,
                self.owner.as_deref(),
            ) == (
                other.org.as_str(),
                other.agent.as_str(),
                other.scope,
                other.owner.as_deref(),
            )
            && !self.subject.is_empty()
            && self.subject == other.subject
            && self.content != other.content
    }
}

/// A record about to be written (and, with its id, a stored [`MemoryRecord`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct NewRecord {
    pub org: String,
    pub agent: String,
    #[sqlx(try_from = "String")]
    pub scope: Scope,
    pub owner: Option<String>,
    pub subject: String,
    pub kind: String,
    pub content: String,
    #[sqlx(try_from = "String")]
    pub status: Status,
    pub source: String,
    /// When it was said (ms since epoch). Supersession orders by this.
    pub said_at: i64,
    /// When it was written (ms since epoch).
    pub recorded_at: i64,
    pub expires_at: Option<i64>,
    pub conversation: Option<String>,
    /// The proposal batch (the message that produced it) for "Remember this?".
    pub batch: Option<i64>,
    /// Who said it: a stored user id or a system principal; `None` for operator writes.
    pub author: Option<String>,
    /// Whose behalf it was said on, when a delegate said it (the author is
    /// the delegate; the record is in the delegate's own places).
    pub on_behalf_of: Option<String>,
}

impl NewRecord {
    /// The one builder of a record: `content` said at `said_at` in `org`/`agent`,
    /// active, owned by nobody, with no source yet. Chain the rest.
    pub fn said(
        org: impl Into<String>,
        agent: impl Into<String>,
        scope: Scope,
        kind: impl Into<String>,
        subject: impl Into<String>,
        content: impl Into<String>,
        said_at: i64,
    ) -> NewRecord {
        NewRecord {
            org: org.into(),
            agent: agent.into(),
            scope,
            owner: None,
            subject: subject.into(),
            kind: kind.into(),
            content: content.into(),
            status: Status::Active,
            source: String::new(),
            said_at,
            recorded_at: said_at,
            expires_at: None,
            conversation: None,
            batch: None,
            author: None,
            on_behalf_of: None,
        }
    }

    pub fn owner(mut self, owner: Option<String>) -> Self {
        self.owner = owner;
        self
    }
    pub fn status(mut self, status: Status) -> Self {
        self.status = status;
        self
    }
    pub fn source(mut self, source: impl Into<String>) -> Self {
        self.source = source.into();
        self
    }
    pub fn recorded_at(mut self, at: i64) -> Self {
        self.recorded_at = at;
        self
    }
    pub fn expires_at(mut self, at: Option<i64>) -> Self {
        self.expires_at = at;
        self
    }
    pub fn conversation(mut self, conversation: Option<String>) -> Self {
        self.conversation = conversation;
        self
    }
    pub fn batch(mut self, batch: Option<i64>) -> Self {
        self.batch = batch;
        self
    }
    pub fn author(mut self, author: Option<String>) -> Self {
        self.author = author;
        self
    }
    pub fn on_behalf_of(mut self, principal: Option<String>) -> Self {
        self.on_behalf_of = principal;
        self
    }
}

/// Who wrote a stored line (`messages.author`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MessageAuthor {
    /// A person (paired or not).
    Person,
    /// The agent's own reply.
    Agent,
    /// An automated run.
    System,
}

impl MessageAuthor {
    pub fn as_str(self) -> &'static str {
        match self {
            MessageAuthor::Person => "person",
            MessageAuthor::Agent => "agent",
            MessageAuthor::System => "system",
        }
    }

    /// Unknown values read as `system`: never a person's line, never the agent's.
    pub fn parse(s: &str) -> Self {
        match s {
            "person" => MessageAuthor::Person,
            "agent" => MessageAuthor::Agent,
            _ => MessageAuthor::System,
        }
    }
}

/// What made a record active (`memory_revisions.cause`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Cause {
    /// Said in a live turn (or a tool call, a directive, a consented proposal).
    Live,
    /// Confirmed in review.
    Confirm,
    /// Restored from an archive.
    Relearn,
    /// Merged by consolidation.
    Consolidate,
}

impl Cause {
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::Live => "live",
            Cause::Confirm => "confirm",
            Cause::Relearn => "relearn",
            Cause::Consolidate => "consolidate",
        }
    }
}

/// Which rule retired a record (`memory_revisions.via`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Via {
    SubjectRule,
    BeliefRevision,
    Consolidation,
}

impl Via {
    pub fn as_str(self) -> &'static str {
        match self {
            Via::SubjectRule => "subject_rule",
            Via::BeliefRevision => "belief_revision",
            Via::Consolidation => "consolidation",
        }
    }
}

/// Agent id used for records that belong to no single agent (person tier, org policy).
pub const ANY_AGENT: &str = "*";

/// The stored message a record was learned from, when its `source` names one
/// (`live:discord:message:42`, `trim:archive:3:message:42`, …): a forgotten
/// record's tombstone is keyed by it too (`store/tombstones.rs`).
pub fn source_message(source: &str) -> Option<i64> {
    let (_, id) = source.rsplit_once(":message:")?;
    id.parse().ok()
}

/// Longest agent id.
pub const MAX_AGENT_ID_CHARS: usize = 64;

/// Whether `id` may name an agent: letters, digits, `-`, `_`, `.`, at most
/// [`MAX_AGENT_ID_CHARS`] of them; never [`ANY_AGENT`], which marks records
/// of every agent.
pub fn check_agent_id(id: &str) -> Result<(), &'static str> {
    if id == ANY_AGENT {
        return Err("`*` stands for every agent and cannot name one");
    }
    if !is_plain_id(id) {
        return Err("an agent id is 1 to 64 letters, digits, `-`, `_` or `.`");
    }
    Ok(())
}

/// 1 to [`MAX_AGENT_ID_CHARS`] ASCII letters, digits, `-`, `_` or `.` (the
/// API documents the same pattern).
fn is_plain_id(id: &str) -> bool {
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    !id.is_empty() && id.chars().count() <= MAX_AGENT_ID_CHARS && id.chars().all(plain)
}

/// Whether `id` can name an organisation: 1 to [`MAX_AGENT_ID_CHARS`]
/// letters, digits, `-`, `_` or `.` — the rule of agent ids, so an
/// organisation shows alike in a path, a page, a file name and a log.
pub fn check_org_id(id: &str) -> Result<(), &'static str> {
    if !is_plain_id(id) {
        return Err("an organisation is 1 to 64 letters, digits, `-`, `_` or `.`");
    }
    Ok(())
}

/// A row of `memory_revisions`: one record retired by another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow, Deref)]
pub struct Revision {
    pub id: i64,
    pub org: String,
    pub agent: String,
    #[sqlx(flatten)]
    #[serde(flatten)]
    #[deref]
    pub change: RevisionChange,
    pub created_at: i64,
    pub undone_at: Option<i64>,
    pub undone_by: Option<String>,
}

/// What a revision did, as every view of one shows it (the API's, the
/// replay's): which record retired which, why, and in which run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, sqlx::FromRow)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RevisionChange {
    pub retired_id: i64,
    pub replacing_id: i64,
    pub reason: String,
    /// `subject_rule`, `belief_revision` or `consolidation`.
    pub via: String,
    /// `live`, `relearn`, `confirm`, `revise` or `consolidate`.
    pub cause: String,
    /// The run it was made in: `POST /api/v1/runs/{run}/undo` undoes them all.
    pub run_id: String,
    pub model: Option<String>,
    pub prompt_version: Option<String>,
}

/// One stored conversation line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct StoredMessage {
    pub id: i64,
    pub org: String,
    pub agent: String,
    pub channel: String,
    pub conversation: String,
    pub conversation_kind: String,
    /// `person`, `agent` (the bot's reply) or `system`.
    pub author: String,
    /// The stored user id, or none for unpaired senders and agent replies.
    pub sender: Option<String>,
    /// The role the message was sent with (`admin`, `user`, a system principal, or none).
    pub sender_role: Option<String>,
    pub text: String,
    pub said_at: i64,
}

impl StoredMessage {
    /// Who wrote this line, as an enum.
    pub fn written_by(&self) -> MessageAuthor {
        MessageAuthor::parse(&self.author)
    }

    /// The role the line was stored with, when it was a person's paired role.
    pub fn stored_role(&self) -> Option<Role> {
        self.sender_role.as_deref().and_then(|r| r.parse().ok())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct AuditEntry {
    pub id: i64,
    pub org: String,
    pub actor: String,
    pub action: String,
    pub target: String,
    pub detail: String,
    pub at: i64,
}
