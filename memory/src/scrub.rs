//! The scrubber of role memory: what everyone in a work role shares holds no
//! personal data and no ids. A proposal is refused, before anything is
//! stored, when its text holds a user id of any channel (a Discord snowflake
//! or `<@…>` mention, a Teams `29:…` id, a stored id such as `discord:…` or
//! `cli:…`), an e-mail address, a phone number, the name of a paired person,
//! or a credential (`credentials::credential_in`).

use crate::credentials::{credential_in, Credential};
use regex::Regex;
use std::sync::OnceLock;

/// Why a text may not enter role memory.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScrubRefusal {
    #[error("role memory holds no user ids")]
    UserId,
    #[error("role memory holds no e-mail addresses")]
    Email,
    #[error("role memory holds no phone numbers")]
    Phone,
    #[error("role memory holds no names of people")]
    PersonName,
    #[error("role memory never keeps a {}", .0.as_str())]
    Credential(Credential),
    #[error("role memory needs some text")]
    Empty,
}

impl ScrubRefusal {
    /// The machine-readable code of the refusal.
    pub fn code(&self) -> &'static str {
        match self {
            ScrubRefusal::UserId => "holds_user_id",
            ScrubRefusal::Email => "holds_email",
            ScrubRefusal::Phone => "holds_phone_number",
            ScrubRefusal::PersonName => "holds_person_name",
            ScrubRefusal::Credential(_) => "holds_credential",
            ScrubRefusal::Empty => "empty",
        }
    }
}

struct Patterns {
    user_id: Vec<Regex>,
    email: Regex,
    phone: Regex,
}

fn patterns() -> Option<&'static Patterns> {
    static P: OnceLock<Option<Patterns>> = OnceLock::new();
    P.get_or_init(|| {
        let user_id = [
            // Discord mentions: <@123…>, <@!123…>.
            r"<@!?&?\d+>",
            // Discord snowflakes: 17 to 20 digits.
            r"\b\d{17,20}\b",
            // Teams (Bot Framework) user ids: 29:…, 8:orgid:….
            r"\b(?:29|28|8):[A-Za-z0-9_\-:.]{6,}",
            // Steward's stored ids: channel:id.
            r"(?i)\b(?:discord|teams|cli|api|web|dashboard|slack|telegram):[A-Za-z0-9_\-.@]+",
        ]
        .iter()
        .map(|p| Regex::new(p))
        .collect::<Result<Vec<_>, _>>()
        .ok()?;
        Some(Patterns {
            user_id,
            email: Regex::new(r"(?i)\b[A-Z0-9._%+\-]+@[A-Z0-9.\-]+\.[A-Z]{2,}\b").ok()?,
            // An international number, or 9+ digits in groups.
            phone: Regex::new(
                r"(?:\+\d[\d\s().\-]{7,}\d)|(?:\(?\b\d{2,4}\)?[\s.\-]\d{3,4}[\s.\-]\d{3,4}\b)",
            )
            .ok()?,
        })
    })
    .as_ref()
}

/// Refuse `text` if it holds personal data or ids; `names` are the display
/// names (and user ids) of the organisation's paired people, matched as
/// whole words, case-insensitively.
pub fn scrub(text: &str, names: &[String]) -> Result<(), ScrubRefusal> {
    if text.trim().is_empty() {
        return Err(ScrubRefusal::Empty);
    }
    if let Some(kind) = credential_in(text) {
        return Err(ScrubRefusal::Credential(kind));
    }
    // Fail closed: without its patterns the scrubber lets nothing through.
    let Some(p) = patterns() else {
        return Err(ScrubRefusal::UserId);
    };
    if p.email.is_match(text) {
        return Err(ScrubRefusal::Email);
    }
    if p.user_id.iter().any(|re| re.is_match(text)) {
        return Err(ScrubRefusal::UserId);
    }
    if p.phone.is_match(text) {
        return Err(ScrubRefusal::Phone);
    }
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric() && c != '-' && c != '\'')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    for name in names {
        let parts: Vec<String> = name
            .split(|c: char| !c.is_alphanumeric() && c != '-' && c != '\'')
            .filter(|w| w.chars().count() >= 2)
            .map(str::to_lowercase)
            .collect();
        if parts.is_empty() {
            continue;
        }
        // The whole name, as consecutive words.
        if words.windows(parts.len()).any(|w| w == parts.as_slice()) {
            return Err(ScrubRefusal::PersonName);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_pattern_has_positive_and_negative_rows() {
        let names = vec!["Ana Lima".to_string(), "bob".to_string()];
        let rows: &[(&str, Option<ScrubRefusal>)] = &[
            (
                "ask <@123456789012345678> about it",
                Some(ScrubRefusal::UserId),
            ),
            (
                "user 123456789012345678 reported",
                Some(ScrubRefusal::UserId),
            ),
            ("the Teams id 29:1AbCdEfGhIjK", Some(ScrubRefusal::UserId)),
            ("stored as discord:42", Some(ScrubRefusal::UserId)),
            ("port 8080 and ratio 3:1", None),
            ("write to ana@example.com", Some(ScrubRefusal::Email)),
            ("the @here mention", None),
            ("call +44 20 7946 0958", Some(ScrubRefusal::Phone)),
            ("call 555-123-4567 now", Some(ScrubRefusal::Phone)),
            ("version 1.2.3 of the rubric", None),
            ("ask Ana Lima first", Some(ScrubRefusal::PersonName)),
            ("Bob said so", Some(ScrubRefusal::PersonName)),
            ("Bobby tables is a joke", None),
            ("an analyst checks the lineage first", None),
        ];
        for (text, want) in rows {
            assert_eq!(scrub(text, &names).err(), *want, "{text}");
        }
    }
}
