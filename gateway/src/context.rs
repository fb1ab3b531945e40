//! Context assembly (SPEC §8): precedence, and memory as data behind a fixed prefix.

use memory::sanitize::sanitize;
use memory::store::Retrieved;
use memory::{Principal, Scope};

fn rank(scope: Scope) -> u8 {
    match scope {
        Scope::OrgPolicy => 0,
        Scope::AgentNotes => 1,
        Scope::Person => 2,
        Scope::Personal => 3,
    }
}

/// Most authoritative first: org policy memory, agent_notes, the speaker's own.
/// Stable, so retrieval's relevance order holds within one level.
pub fn order_by_precedence(found: &mut [Retrieved]) {
    found.sort_by_key(|r| rank(r.record.scope));
}

/// The prompt a model responder reads: the system policy, then each record as
/// data, sanitised again at injection.
/// `previous` are summaries of trimmed slices of this conversation, newest first.
pub fn assemble(
    org: &str,
    agent: &str,
    principal: &Principal,
    found: &[Retrieved],
    previous: &[String],
) -> String {
    let role = match principal {
        Principal::Human { role, .. } => role.as_str().to_string(),
        Principal::System(s) => format!("{} (automated run, not a person)", s.as_str()),
        Principal::Unpaired => "unpaired (no role)".into(),
    };
    let mut out = prompts::system()
        .text
        .replace("{agent}", agent)
        .replace("{org}", org)
        .replace("{role}", &role);
    if !previous.is_empty() {
        out.push_str("\nPREVIOUS CONTEXT (summaries of earlier parts of this conversation):");
        for p in previous.iter().rev() {
            out.push_str(&format!("\n- {}", sanitize(p)));
        }
    }
    for r in found {
        out.push_str(&format!(
            "\n<<<memory:{} {}: {}>>>",
            r.record.id,
            r.record.scope.as_str(),
            sanitize(&r.record.content)
        ));
    }
    out
}
