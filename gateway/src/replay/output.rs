//! What a replay prints (`--json`): its replies, the records, revisions and
//! skills it left. A contract: keep it stable.

use adapters::Reply;
use chrono::{SecondsFormat, TimeZone, Utc};
use memory::{MemoryRecord, Revision, RevisionChange};
use serde::{Deserialize, Serialize};

/// One reply, as the replay contract prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplyRow {
    pub conversation: String,
    pub text: String,
    /// The transcript line (1-based) whose event gave this reply.
    #[serde(default)]
    pub line: usize,
}

/// One memory record, as the replay contract prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryRow {
    pub id: i64,
    pub scope: String,
    pub owner: Option<String>,
    pub subject: String,
    pub content: String,
    pub kind: String,
    pub status: String,
    pub source: String,
    pub said_at: String,
    pub recorded_at: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, derive_more::Deref)]
pub struct RevisionRow {
    pub id: i64,
    #[serde(flatten)]
    #[deref]
    pub change: RevisionChange,
    pub undone: bool,
}

/// One skill revision, as the replay contract prints it (only when the
/// replay made any: corrections, `/learn`, a model's `skill_propose`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillRow {
    pub id: i64,
    pub slug: String,
    pub rev: i64,
    pub status: String,
    pub proposed_by: String,
    pub approved_by: Option<String>,
    pub description: String,
    pub body: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayOutput {
    pub replies: Vec<ReplyRow>,
    pub memory: Vec<MemoryRow>,
    pub revisions: Vec<RevisionRow>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skills: Vec<SkillRow>,
}

fn rfc3339(ms: i64) -> String {
    Utc.timestamp_millis_opt(ms)
        .single()
        .map(|t| t.to_rfc3339_opts(SecondsFormat::Secs, true))
        .unwrap_or_default()
}

impl ReplyRow {
    pub(super) fn of(line: usize) -> impl Fn(Reply) -> ReplyRow {
        move |r| ReplyRow {
            conversation: r.conversation,
            text: r.text,
            line,
        }
    }
}

impl From<MemoryRecord> for MemoryRow {
    fn from(MemoryRecord { id, written: r }: MemoryRecord) -> Self {
        MemoryRow {
            id,
            scope: r.scope.as_str().into(),
            owner: r.owner,
            subject: r.subject,
            content: r.content,
            kind: r.kind,
            status: r.status.as_str().into(),
            source: r.source,
            said_at: rfc3339(r.said_at),
            recorded_at: rfc3339(r.recorded_at),
        }
    }
}

impl From<Revision> for RevisionRow {
    fn from(r: Revision) -> Self {
        RevisionRow {
            id: r.id,
            undone: r.undone_at.is_some(),
            change: r.change,
        }
    }
}
