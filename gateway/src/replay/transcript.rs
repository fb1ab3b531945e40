//! The transcript: one JSON object a line, each an `Event`, every line
//! parsed and checked before the first runs.

use super::{Event, ReplayError};
use adapters::ConversationKind;
use chrono::{DateTime, TimeZone, Utc};
use memory::{Role, SystemPrincipal};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PairEvent {
    pub(super) channel: String,
    pub(super) user: String,
    pub(super) role: Role,
    pub(super) name: Option<String>,
    pub(super) org: Option<String>,
    /// Accepted like every event's `agent`, and unused: a pairing is the
    /// organisation's, not one agent's.
    #[serde(rename = "agent")]
    pub(super) _agent: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct MsgEvent {
    pub(super) channel: String,
    pub(super) conversation: String,
    #[serde(default = "direct")]
    pub(super) kind: ConversationKind,
    pub(super) sender: Option<String>,
    pub(super) name: Option<String>,
    pub(super) text: String,
    pub(super) at: Option<DateTime<Utc>>,
    #[serde(default)]
    pub(super) mention: bool,
    /// The platform's message id, for redelivery tests.
    pub(super) id: Option<String>,
    pub(super) org: Option<String>,
    pub(super) agent: Option<String>,
}

pub(super) fn direct() -> ConversationKind {
    ConversationKind::Direct
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SystemEvent {
    pub(super) principal: String,
    pub(super) conversation: String,
    pub(super) text: String,
    pub(super) at: Option<DateTime<Utc>>,
    pub(super) org: Option<String>,
    pub(super) agent: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RunEvent {
    /// The schedule's or webhook's name (a skill's slug on demand).
    pub(super) name: String,
    pub(super) trigger: memory::run::Trigger,
    /// An approved skill to follow, or an instruction: exactly one.
    pub(super) skill: Option<String>,
    pub(super) text: Option<String>,
    /// A webhook's body.
    pub(super) payload: Option<String>,
    pub(super) at: Option<DateTime<Utc>>,
    pub(super) org: Option<String>,
    pub(super) agent: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ToolEvent {
    pub(super) name: String,
    #[serde(rename = "as")]
    pub(super) as_: String,
    pub(super) scope: String,
    pub(super) content: String,
    pub(super) at: Option<DateTime<Utc>>,
    pub(super) org: Option<String>,
    pub(super) agent: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ConversationEvent {
    pub(super) conversation: String,
    pub(super) org: Option<String>,
    pub(super) agent: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RolesEvent {
    /// The person, as paired (`discord:222`).
    #[serde(rename = "as")]
    pub(super) as_: String,
    #[serde(default)]
    pub(super) add: Vec<String>,
    #[serde(default)]
    pub(super) remove: Vec<String>,
    /// Roles whose memory they may accept (`role_memory.manage`).
    #[serde(default)]
    pub(super) grant: Vec<String>,
    pub(super) org: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CurateEvent {
    pub(super) role: String,
    pub(super) kind: memory::store::role_memory::RoleKind,
    pub(super) text: String,
    /// Who proposes, accepts and confirms it, as paired (`discord:222`).
    pub(super) by: String,
    pub(super) accept: String,
    pub(super) confirm: String,
    pub(super) org: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct UndoEvent {
    pub(super) revision: i64,
    pub(super) org: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ReviewEvent {
    pub(super) confirm: Option<i64>,
    pub(super) reject: Option<i64>,
    pub(super) org: Option<String>,
}

/// The earliest time a transcript may name (and the latest, below): outside
/// them the loop's millisecond arithmetic has no meaning.
pub(super) fn replay_epoch() -> DateTime<Utc> {
    DateTime::<Utc>::UNIX_EPOCH
}

pub(super) fn latest_time() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(9999, 12, 31, 23, 59, 59)
        .single()
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}

pub(super) fn parse(input: &str) -> Result<Vec<(usize, Event)>, ReplayError> {
    let mut events = Vec::new();
    for (i, line) in input.lines().enumerate() {
        let line_no = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let event: Event = serde_json::from_str(line).map_err(|e| ReplayError::Line {
            line: line_no,
            reason: e.to_string(),
        })?;
        let bad = |reason: &str| ReplayError::Line {
            line: line_no,
            reason: reason.into(),
        };
        let at = match &event {
            Event::Msg(m) => m.at,
            Event::System(s) => s.at,
            Event::Run(r) => r.at,
            Event::Tool(t) => t.at,
            _ => None,
        };
        if at.is_some_and(|at| !(replay_epoch()..=latest_time()).contains(&at)) {
            return Err(bad("`at` must lie between 1970-01-01 and 9999-12-31"));
        }
        match &event {
            Event::System(s) if SystemPrincipal::parse(&s.principal).is_none() => {
                return Err(bad(
                    "unknown system principal (cron-system, sop-system, webhook-system, delegated)",
                ))
            }
            Event::Run(r) if r.skill.is_some() == r.text.is_some() => {
                return Err(bad("a run needs exactly one of skill or text"))
            }
            Event::Run(r) if r.payload.is_some() && r.trigger != memory::run::Trigger::Webhook => {
                return Err(bad("only a webhook run has a payload"))
            }
            Event::Tool(t) if t.name != "memory_write" => {
                return Err(bad("unknown tool (memory_write)"))
            }
            Event::Review(r) if r.confirm.is_some() == r.reject.is_some() => {
                return Err(bad("review needs exactly one of confirm or reject"))
            }
            _ => {}
        }
        events.push((line_no, event));
    }
    Ok(events)
}
