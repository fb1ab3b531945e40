//! Precedence of memory: records ordered by scope, disagreements noted, policy
//! overrides applied.

use super::*;

pub(super) fn rank(scope: Scope) -> u8 {
    match scope {
        Scope::OrgPolicy => 0,
        Scope::AgentNotes => 1,
        Scope::Role => 2,
        Scope::Person => 3,
        Scope::Personal => 4,
    }
}

/// Records found for a reply that disagree: pairs of active records on one
/// subject in one place (see `MemoryRecord::disagrees_with`), each pair once.
pub fn disagreements(found: &[Retrieved]) -> Vec<(&memory::MemoryRecord, &memory::MemoryRecord)> {
    let mut out = Vec::new();
    for (i, a) in found.iter().enumerate() {
        for b in &found[i + 1..] {
            if a.record.disagrees_with(&b.record) {
                out.push((&a.record, &b.record));
            }
        }
    }
    out
}

/// The line a reply adds when the memory it drew on disagrees with itself.
pub fn disagreement_note(
    pairs: &[(&memory::MemoryRecord, &memory::MemoryRecord)],
) -> Option<String> {
    if pairs.is_empty() {
        return None;
    }
    let each: Vec<String> = pairs
        .iter()
        .map(|(a, b)| {
            let (lo, hi) = (a.id.min(b.id), a.id.max(b.id));
            format!("#{lo} and #{hi} on “{}”", sanitize(&a.subject))
        })
        .collect();
    Some(format!(
        "Note: my memory disagrees with itself ({}): both are active and say different things. An admin can forget the wrong one.",
        each.join("; ")
    ))
}

/// Most authoritative first: org policy memory, agent_notes, the speaker's
/// roles' memory, the speaker's own.
/// Stable, so retrieval's relevance order holds within one level.
pub fn order_by_precedence(found: &mut [Retrieved]) {
    found.sort_by_key(|r| rank(r.record.scope));
}

/// An agent note that an org policy record on the same subject overrides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overridden {
    pub note: i64,
    pub policy: i64,
}

/// Org policy wins over agent_notes on the same subject: the note leaves the
/// context and the override is recorded so the prompt can say so.
pub fn apply_policy_overrides(found: &mut Vec<Retrieved>) -> Vec<Overridden> {
    let policies: Vec<(String, i64)> = found
        .iter()
        .filter(|r| r.record.scope == Scope::OrgPolicy)
        .map(|r| (r.record.subject.clone(), r.record.id))
        .collect();
    let mut out = Vec::new();
    found.retain(|r| {
        if r.record.scope != Scope::AgentNotes {
            return true;
        }
        match policies
            .iter()
            .find(|(subject, _)| *subject == r.record.subject)
        {
            Some((_, policy)) => {
                out.push(Overridden {
                    note: r.record.id,
                    policy: *policy,
                });
                false
            }
            None => true,
        }
    });
    out
}
