//! The reply's parts, assembled in a fixed order.

use super::{Turn, TurnLoop};
use adapters::Reply;

/// The parts of a reply, assembled in a fixed order: answer, notes, receipts, question.
#[derive(Default)]
pub(super) struct ReplyParts {
    pub(super) answer: Option<String>,
    pub(super) notes: Vec<String>,
    pub(super) receipts: Vec<String>,
    pub(super) question: Vec<String>,
    pub(super) batch: Option<i64>,
}

impl TurnLoop {
    pub(super) fn render(&self, t: &Turn<'_>, parts: ReplyParts) -> Reply {
        let mut lines: Vec<String> = Vec::new();
        lines.extend(parts.answer);
        lines.extend(parts.notes);
        lines.extend(parts.receipts);
        if !parts.question.is_empty() {
            lines.push(format!(
                "Remember this? {} — reply yes or no",
                parts.question.join("; ")
            ));
        }
        if lines.is_empty() {
            lines.push("Noted.".into());
        }
        Reply {
            conversation: t.msg.conversation.clone(),
            text: lines.join("\n"),
            proposal: if parts.question.is_empty() {
                None
            } else {
                parts.batch
            },
        }
    }
}
