//! Text an administrator reads without a reason (docs/memory.md, "Oversight
//! and the two promises"): audit details and revision reasons. Such text is
//! an [`AdminText`], and an `AdminText` is made only of pieces that hold no
//! person's words — numbers, fixed wording, identifiers, the words of an
//! organisation's own records and an administrator's own reason — so a
//! person's words cannot reach these fields: the compiler holds it.
//!
//! ```
//! use memory::admin_text;
//! use memory::admin_text::Identifier;
//! let detail = admin_text!("key {} of {}", 7, Identifier::new("discord:1"));
//! assert_eq!(detail.as_str(), "key 7 of discord:1");
//! ```
//!
//! A `String` — a message, a record's content, a model's summary — is no piece:
//!
//! ```compile_fail,E0277
//! use memory::admin_text;
//! let said = String::from("my knee surgery is on Friday");
//! let detail = admin_text!("replaced: {}", said);
//! ```
//!
//! nor is a borrowed one, and a format string cannot capture it by name:
//!
//! ```compile_fail,E0521
//! use memory::admin_text;
//! fn detail(said: &str) -> memory::admin_text::AdminText {
//!     admin_text!("replaced: {}", said)
//! }
//! ```
//!
//! ```compile_fail
//! use memory::admin_text;
//! let said = "my knee surgery is on Friday";
//! let detail = admin_text!("replaced: {said}");
//! ```

use crate::model::NewRecord;
use std::fmt;

/// Text an administrator may read without a reason: built by
/// [`admin_text!`](crate::admin_text!) from [`NotPersonal`] pieces only.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AdminText(String);

impl AdminText {
    /// No detail.
    pub fn empty() -> Self {
        AdminText(String::new())
    }

    /// Fixed wording.
    pub fn fixed(text: &'static str) -> Self {
        AdminText(text.to_string())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// A job's or an import's report, as JSON: its numbers and flags as they
    /// are, each of its strings as an [`Identifier`] (a sentence is withheld).
    pub fn report(report: &impl serde::Serialize) -> Self {
        fn names_only(v: serde_json::Value) -> serde_json::Value {
            use serde_json::Value;
            match v {
                Value::String(s) => Value::String(Identifier::new(&s).to_string()),
                Value::Array(items) => Value::Array(items.into_iter().map(names_only).collect()),
                Value::Object(fields) => Value::Object(
                    fields
                        .into_iter()
                        .map(|(k, v)| (Identifier::new(&k).to_string(), names_only(v)))
                        .collect(),
                ),
                other => other,
            }
        }
        let value = serde_json::to_value(report).unwrap_or_default();
        AdminText(names_only(value).to_string())
    }

    /// Not for callers: what [`admin_text!`](crate::admin_text!) expands to,
    /// after each piece was checked to be [`NotPersonal`].
    #[doc(hidden)]
    pub fn __from_checked_pieces(text: String) -> Self {
        AdminText(text)
    }
}

impl fmt::Display for AdminText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A piece an [`AdminText`] may hold: it carries no person's words.
/// Sealed: the pieces are the ones this module lists.
pub trait NotPersonal: fmt::Display + sealed::Sealed {}

mod sealed {
    pub trait Sealed {}
}

macro_rules! not_personal {
    ($($t:ty),* $(,)?) => {
        $(impl sealed::Sealed for $t {}
          impl NotPersonal for $t {})*
    };
}

not_personal!(
    i64,
    i32,
    u64,
    u32,
    usize,
    u16,
    u8,
    bool,
    &'static str,
    AdminText
);
impl sealed::Sealed for Identifier<'_> {}
impl NotPersonal for Identifier<'_> {}
impl sealed::Sealed for Identifiers<'_> {}
impl NotPersonal for Identifiers<'_> {}
impl sealed::Sealed for Ids<'_> {}
impl NotPersonal for Ids<'_> {}
impl sealed::Sealed for OrgWords<'_> {}
impl NotPersonal for OrgWords<'_> {}
impl<T: NotPersonal> sealed::Sealed for &T {}
impl<T: NotPersonal> NotPersonal for &T {}

/// The longest an [`Identifier`] is shown; anything longer is no identifier.
const MAX_IDENTIFIER_CHARS: usize = 128;
/// The most words an [`Identifier`] holds (a display name: "Ana Lima").
const MAX_IDENTIFIER_WORDS: usize = 4;
/// What an administrator sees in place of something that is no identifier.
pub const WITHHELD: &str = "(text withheld)";

/// A name of a thing: a stored user id, a display name, a role, a skill, a
/// key or run id, a file path of the operator's. Anything longer than
/// [`MAX_IDENTIFIER_CHARS`] characters or [`MAX_IDENTIFIER_WORDS`] words, or
/// on more than one line, is shown as [`WITHHELD`]: a sentence is no name.
#[derive(Debug, Clone, Copy)]
pub struct Identifier<'a>(&'a str);

impl<'a> Identifier<'a> {
    pub fn new(name: &'a str) -> Self {
        Identifier(name)
    }

    fn is_name(&self) -> bool {
        self.0.chars().count() <= MAX_IDENTIFIER_CHARS
            && self.0.split_whitespace().count() <= MAX_IDENTIFIER_WORDS
            && !self.0.contains(['\n', '\r'])
    }
}

impl fmt::Display for Identifier<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.is_name() { self.0 } else { WITHHELD })
    }
}

/// Several [`Identifier`]s, shown joined by ", ".
#[derive(Debug, Clone, Copy)]
pub struct Identifiers<'a>(&'a [String]);

impl<'a> Identifiers<'a> {
    pub fn new(names: &'a [String]) -> Self {
        Identifiers(names)
    }
}

impl fmt::Display for Identifiers<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, name) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            Identifier::new(name).fmt(f)?;
        }
        Ok(())
    }
}

/// Record or revision ids, shown joined by "," (as `with:3,7`).
#[derive(Debug, Clone, Copy)]
pub struct Ids<'a>(pub &'a [i64]);

impl fmt::Display for Ids<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, id) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{id}")?;
        }
        Ok(())
    }
}

/// Words every administrator may read: an organisation's own records (its
/// policy and operational notes, never a person's), or an administrator's
/// own words about what they did.
#[derive(Debug, Clone, Copy)]
pub struct OrgWords<'a>(&'a str);

impl<'a> OrgWords<'a> {
    /// The content of `records`, when every one of them is the
    /// organisation's: a person's record gives `None`.
    pub fn of_records(text: &'a str, records: &[&NewRecord]) -> Option<Self> {
        records
            .iter()
            .all(|r| !r.scope.is_personal())
            .then_some(OrgWords(text))
    }

    /// An administrator's own words about an act of theirs (the reason for
    /// an oversight read or an act as someone, the query they searched a
    /// person's memory with): shown to the person too.
    pub fn administrators_words(words: &'a str) -> Self {
        OrgWords(words)
    }
}

impl fmt::Display for OrgWords<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// Check that a piece is [`NotPersonal`]; what [`admin_text!`](crate::admin_text!) calls.
#[doc(hidden)]
pub fn __piece<T: NotPersonal>(piece: T) -> T {
    piece
}

/// An [`AdminText`] from a format string and [`NotPersonal`] pieces. The
/// format string is a literal passed through `concat!`, and a format string
/// expanded from a macro cannot capture a variable by name, so every piece
/// passes the check.
#[macro_export]
macro_rules! admin_text {
    ($fmt:literal $(, $piece:expr)* $(,)?) => {
        $crate::admin_text::AdminText::__from_checked_pieces(
            format!(concat!($fmt) $(, $crate::admin_text::__piece($piece))*)
        )
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_names_and_a_sentence_is_withheld() {
        assert_eq!(Identifier::new("discord:123").to_string(), "discord:123");
        assert_eq!(Identifier::new("Ana Lima").to_string(), "Ana Lima");
        assert_eq!(
            Identifier::new("my knee surgery is on Friday").to_string(),
            WITHHELD
        );
        assert_eq!(Identifier::new("a\nb").to_string(), WITHHELD);
        assert_eq!(Identifier::new(&"x".repeat(200)).to_string(), WITHHELD);
    }

    #[test]
    fn a_report_keeps_numbers_and_names_and_withholds_sentences() {
        let report = serde_json::json!({
            "written": 3,
            "ids": [1, 2],
            "user": "discord:1",
            "said": "my knee surgery is on Friday at St Mary",
        });
        let text = AdminText::report(&report);
        assert!(text.as_str().contains("\"written\":3"), "{text}");
        assert!(text.as_str().contains("discord:1"), "{text}");
        assert!(!text.as_str().contains("surgery"), "{text}");
    }

    #[test]
    fn pieces_make_the_text() {
        let t = admin_text!("{} of {} ({})", 3, Identifier::new("cli:alice"), "fixed");
        assert_eq!(t.as_str(), "3 of cli:alice (fixed)");
        let nested = admin_text!("{}; then {}", &t, AdminText::fixed("done"));
        assert_eq!(nested.as_str(), "3 of cli:alice (fixed); then done");
    }
}
