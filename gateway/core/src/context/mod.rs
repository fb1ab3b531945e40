//! Context assembly: precedence (docs/memory.md, "Scopes, and which wins"), and
//! memory as data behind a fixed prefix.

mod cite;
mod grounded;
mod language;
mod precedence;
mod prompt;
mod reading;
mod scrub;
mod text;
mod unpromised;

pub use cite::{cite, cites, CITATION};
pub use grounded::{
    grounded, grounded_given, with_the_note_of_the_dropped, without_invented_values,
    without_unrelated_values, GROUNDING_MIN_HITS, MEMORY_SAYS,
};
pub(crate) use language::is_unspaced_script;
use language::*;
pub use language::{days_glossed, notes_glossed, written_in};
pub use precedence::{
    apply_policy_overrides, disagreement_note, disagreements, order_by_precedence, Overridden,
};
pub use prompt::{
    assemble, instruction_of, memory_frame, notes_found_for, payload_frame, reply_language, Prompt,
    PromptParts, PAYLOAD_CHARS,
};
pub use reading::Reading;
pub use scrub::scrub_answer;
use text::*;
pub use unpromised::{promises, unpromised, ASKED_FIRST, NOT_PROMISED};

use aho_corasick::AhoCorasick;
use chrono::{Datelike, Weekday};
use memory::policy::ANSWER_IN_SUBJECT;
use memory::sanitize::sanitize;
use memory::store::Retrieved;
use memory::{Kind, Principal, Scope};
use std::sync::{Arc, LazyLock, Mutex, OnceLock};

#[cfg(test)]
mod tests;
