//! `Reading`: the message's content words made once a turn, each record's once,
//! shared by the reply checks.

use super::*;

/// What a turn's reply checks ([`scrub_answer`], [`without_unrelated_values`],
/// [`grounded`], [`cite`]) read of the message and of the records: the
/// message's content words (`memory::grounding::content_words`) made once,
/// and each record's made when first asked for, not once a check.
pub struct Reading<'t> {
    pub(super) message: &'t str,
    pub(super) asked: Vec<String>,
    /// The message's words folded (`memory::scrub::fold_words`), made when
    /// a check first compares an answer's words with them.
    folded: OnceLock<Vec<String>>,
    pub(super) records: &'t [Retrieved],
    pub(super) words: Vec<OnceLock<Vec<String>>>,
}

impl<'t> Reading<'t> {
    /// The reading of `message`, with the `records` the checks may look at
    /// (any other record is read when asked for, and not kept).
    pub fn new(message: &'t str, records: &'t [Retrieved]) -> Reading<'t> {
        Reading {
            message,
            asked: memory::grounding::content_words(message),
            folded: OnceLock::new(),
            records,
            words: records.iter().map(|_| OnceLock::new()).collect(),
        }
    }

    /// The message as the speaker wrote it.
    pub fn message(&self) -> &'t str {
        self.message
    }

    /// The message's content words.
    pub(super) fn asked(&self) -> &[String] {
        &self.asked
    }

    /// The message's words folded: case, accents and marks as
    /// `memory::scrub::fold_words` drops them.
    pub(super) fn folded(&self) -> &[String] {
        self.folded
            .get_or_init(|| memory::scrub::fold_words(self.message))
    }

    /// `r`'s content words.
    pub(super) fn words_of(&self, r: &Retrieved) -> std::borrow::Cow<'_, [String]> {
        let kept = self
            .records
            .iter()
            .position(|k| k.record.id == r.record.id && k.record.content == r.record.content);
        match kept {
            Some(at) => std::borrow::Cow::Borrowed(
                self.words[at]
                    .get_or_init(|| memory::grounding::content_words(&r.record.content))
                    .as_slice(),
            ),
            None => std::borrow::Cow::Owned(memory::grounding::content_words(&r.record.content)),
        }
    }
}
