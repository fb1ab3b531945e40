//! What no record may hold, whoever writes it: [`screen`] refuses a
//! credential, an instruction aimed at the model and a text over the cap
//! with a typed [`WriteRefusal`], and keeps the sanitised text. The store
//! runs it inside every write (`memory::write` carries the writes out);
//! every surface maps the refusal to its own answer.

use crate::credentials::{credential_in, Credential};
use crate::model::NewRecord;
use crate::policy;
use crate::sanitize;

/// Why the write path refused a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum WriteRefusal {
    /// The text looks like a credential: memory is read back into prompts.
    #[error("{}", policy::credential_refusal(*.0))]
    Credential(Credential),
    /// The text carries an instruction aimed at the model.
    #[error("That reads as an instruction to the assistant (an injected directive or a prompt token): memory never keeps one, so nothing was saved.")]
    Directive,
    /// Over the cap (`sanitize::MAX_LEN`): refused, never cut.
    #[error("{}", sanitize::too_long(*chars))]
    TooLong { chars: usize },
    /// Nothing left to keep once sanitised.
    #[error("There is nothing to keep: the text is empty.")]
    Empty,
}

/// The one screen of every record written: its text (and subject) must hold
/// no credential and no instruction for the model, and fit the cap. Returns
/// the text to keep, sanitised.
pub fn screen_text(subject: &str, content: &str) -> std::result::Result<String, WriteRefusal> {
    if let Some(chars) = sanitize::over_cap(content) {
        return Err(WriteRefusal::TooLong { chars });
    }
    if let Some(kind) = credential_in(content).or_else(|| credential_in(subject)) {
        return Err(WriteRefusal::Credential(kind));
    }
    if sanitize::directive_in(content) || sanitize::directive_in(subject) {
        return Err(WriteRefusal::Directive);
    }
    let kept = sanitize::sanitize(content);
    if kept.is_empty() {
        return Err(WriteRefusal::Empty);
    }
    // What sanitising left must pass too (a credential split by markup).
    if let Some(kind) = credential_in(&kept) {
        return Err(WriteRefusal::Credential(kind));
    }
    Ok(kept)
}

/// [`screen_text`] of a record: the record as it is kept.
pub fn screen(rec: &NewRecord) -> std::result::Result<NewRecord, WriteRefusal> {
    let content = screen_text(&rec.subject, &rec.content)?;
    Ok(NewRecord {
        content,
        ..rec.clone()
    })
}
