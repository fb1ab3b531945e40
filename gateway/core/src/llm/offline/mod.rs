//! The offline model: rules that recognise the statements the write policy
//! sorts (identity and role claims, preferences, procedures, one-off requests:
//! README.md, "What the assistant remembers, and who decides"), and a
//! responder that answers from memory. Deterministic, no network.

mod carry;
mod classify;
mod operational;
mod personal;
mod respond;
mod standing;
mod text;
mod workplace;

pub use carry::{
    as_changed, carried_into, gives_a_new_value_of, is_a_fact_of_theirs, no_longer_holds,
    says_something_former,
};
use classify::*;
pub use classify::{extract, joined, label, statements};
use operational::*;
pub use operational::{
    corrects_a_fact, frames_a_rule, told_to_everyone, unheaded, UNKEYED, VALUED_KIND,
};
use personal::*;
pub use personal::{keyed_by_length, transient, REPLY_LENGTH_SUBJECT};
pub use respond::{best_matches, respond, respond_if_known, NOTHING_IN_MEMORY};
use standing::*;
use text::*;
pub use text::{
    asks, capitalise, clauses, continued, ends_asking, first_person, of_themselves, QUESTION_MARKS,
};
use workplace::*;

use super::{Extractor, LlmError, ReplyContext, Responder};
use memory::store::Retrieved;
use memory::{Candidate, ItemChannel};
use prompts::lexicon::Class;
use words::words_of;

mod words;

#[derive(Debug, Default, Clone, Copy)]
pub struct OfflineExtractor;

#[derive(Debug, Default, Clone, Copy)]
pub struct OfflineResponder;

#[async_trait::async_trait]
impl Extractor for OfflineExtractor {
    async fn extract(&self, text: &str) -> Result<Vec<Candidate>, LlmError> {
        Ok(extract(text))
    }
}

pub use memory::policy::ANSWER_IN_SUBJECT;

#[async_trait::async_trait]
impl Responder for OfflineResponder {
    async fn respond(&self, ctx: &ReplyContext<'_>) -> Result<String, LlmError> {
        // An approved external tool the message asks for, its argument in
        // the message, is called as a model would (`llm::tool_pick`).
        if let Some(answer) = super::tool_pick::answer(ctx).await {
            return Ok(answer);
        }
        Ok(respond(ctx))
    }
    fn reads_prompt(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod asked_tests;
#[cfg(test)]
mod dated_tests;
#[cfg(test)]
mod heading_tests;
#[cfg(test)]
mod length_tests;
#[cfg(test)]
mod speaker_tests;
#[cfg(test)]
mod tests;
