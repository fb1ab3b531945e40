//! Belief revision (docs/models.md, "Belief revision and consolidation"): after a
//! live or confirmed write, the judge may
//! retire agent notes on the same topic that the subject rule missed. A
//! person's own records it never retires: what it finds conflicting is
//! asked of the person with the proposal ([`Beliefs::conflicts`]).
//!
//! The judge only proposes. Candidates are active records in the new record's
//! own place (organisation, agent, scope, owner) that share its words, said no
//! later than it; `Db::retire` then checks place, time and vetoes again in one
//! transaction and writes the revision with the judge's model and prompt version.
//! `Beliefs` is what `memory::write` calls after every activation.

use crate::llm::Judge;
use memory::admin_text::{AdminText, OrgWords};
use memory::store::{Retirement, RevisionMeta};
use memory::write::{Activated, Revise};
use memory::{Db, Scope, Status, Via};
use std::collections::HashSet;
use std::sync::{Arc, LazyLock};

/// The reason a revision of a person's own records gives: ids and kinds, never
/// their words (administrators read revisions without a reasoned look).
pub const PERSONAL_REVISION: &str = "replaced by a newer statement of the same person";

/// [`PERSONAL_REVISION`] as the revision's reason.
pub fn personal_revision() -> AdminText {
    AdminText::fixed(PERSONAL_REVISION)
}

/// How many related records the judge is shown.
pub const JUDGE_CANDIDATES: usize = 12;

/// Content words two records must share before a judge may retire one for
/// the other: a small model, shown "The VPN endpoint is vpn.example.com" as
/// a candidate for "Deploys need a second reviewer" (the store's related
/// records share words that are no content, "the", "is"), retired it.
pub const SHARED_WORDS_TO_JUDGE: usize = 1;

/// Words of how a rule is put, not of what it is about: two notes sharing
/// only these are about different things (Qwen2.5-Coder-1.5B retired
/// "Always use example_archive for the monthly digest" for "Always use
/// pg-replica-02 for the nightly export").
const HOW_RULES_ARE_PUT: &[&str] = &[
    "always", "never", "use", "uses", "used", "using", "must", "should", "need", "needs", "please",
    "now", "every", "only",
];

/// The stopwords of every language steward answers in but English
/// (`stop-words`: Stopwords ISO's lists). Two Dutch notes share "de", "met",
/// "alleen" and "door" whatever they are about, and Qwen2.5-Coder-1.5B shown
/// one as a candidate for the other retired it. English notes are read as
/// before ([`HOW_RULES_ARE_PUT`], `memory::grounding`'s frame words): its
/// list holds words notes are about ("information", "home").
static FUNCTION_WORDS: LazyLock<HashSet<&'static str>> =
    LazyLock::new(|| stopwords(|code| code != "en").collect());

/// The stopwords of the languages steward answers in whose code `keep`s.
fn stopwords(keep: impl Fn(&str) -> bool) -> impl Iterator<Item = &'static str> {
    prompts::answers::languages()
        .iter()
        .filter(move |l| keep(l.code))
        .flat_map(|l| match l.code {
            // The lists' code for Norwegian Bokmål.
            "nb" => stop_words::get("no"),
            code => stop_words::get(code),
        })
        .copied()
}

/// Whether `old` may be about the same thing as `new`: they share
/// [`SHARED_WORDS_TO_JUDGE`] content words (`memory::grounding::content_words`)
/// beside [`HOW_RULES_ARE_PUT`] and the function words of every language.
pub fn same_topic(new: &str, old: &str) -> bool {
    topic_words_shared(new, old) >= SHARED_WORDS_TO_JUDGE
}

/// How many content words `new` and `old` share beside [`HOW_RULES_ARE_PUT`]
/// and the function words of every language: two German notes share "ist"
/// and "um" whatever they are about.
pub fn topic_words_shared(new: &str, old: &str) -> usize {
    let new = memory::grounding::content_words(new);
    let mut old = memory::grounding::content_words(old);
    old.sort();
    old.dedup();
    old.iter()
        .filter(|w| {
            new.contains(w)
                && !HOW_RULES_ARE_PUT.contains(&w.as_str())
                && !FUNCTION_WORDS.contains(w.as_str())
                // "EUR" is what two amounts are counted in, not what they are
                // for: a note of per diems in EUR retired a note of taxi fares
                // in EUR on Qwen2.5-Coder-1.5B's word.
                && !memory::fulltext::is_currency_word(w)
        })
        .count()
}

/// The stopwords of every language steward answers in, English too, folded
/// as `memory::scrub::fold_words` folds a word ("für" is "fur").
static FOLDED_FUNCTION_WORDS: LazyLock<HashSet<String>> = LazyLock::new(|| {
    stopwords(|_| true)
        .flat_map(memory::scrub::fold_words)
        .collect()
});

/// Whether `text` may be about what `note` says: a word of a topic in both,
/// folded (case, accents, an elided article: "l'Ortler" is "Ortler"), or
/// two words that begin alike for five letters or more, as words of one
/// root do across languages ("laboratuvar", "Laboratório"), or a number or
/// a code ("G3"). Loose on purpose: only a text that shares nothing at all
/// with a note is read as being about something else.
pub fn may_be_about(text: &str, note: &str) -> bool {
    /// Letters two words of one root begin with.
    const ROOT: usize = 5;
    fn topic(text: &str) -> Vec<String> {
        memory::scrub::fold_words(text)
            .into_iter()
            .filter(|w| {
                // A number or a code ("42", "G3") is a topic however short.
                let digit = w.chars().any(|c| c.is_ascii_digit());
                (w.chars().count() >= 3 || (digit && w.len() >= 2))
                    && !FOLDED_FUNCTION_WORDS.contains(w)
                    && !HOW_RULES_ARE_PUT.contains(&w.as_str())
                    && !memory::fulltext::is_currency_word(w)
            })
            .collect()
    }
    let root = |w: &str| w.chars().take(ROOT).collect::<String>();
    let noted = topic(note);
    topic(text).iter().any(|w| {
        noted.iter().any(|n| {
            n == w || (w.chars().count() >= ROOT && n.chars().count() >= ROOT && root(n) == root(w))
        })
    })
}

/// Whether two of a person's records are of one kind and one family of
/// subjects ("prefer:tea", "prefer:coffee"): "Prefers coffee" may replace
/// "Prefers tea" though they share no word, so the judge is shown it (and
/// the person asked, never the record retired unasked).
pub fn same_family(new: &memory::MemoryRecord, old: &memory::MemoryRecord) -> bool {
    let family = |subject: &str| subject.split_once(':').map(|(f, _)| f.to_string());
    new.scope.is_personal()
        && new.kind == old.kind
        && family(&new.subject).is_some_and(|f| !f.is_empty() && Some(f) == family(&old.subject))
}

#[derive(Debug, thiserror::Error)]
enum BeliefError {
    #[error(transparent)]
    Store(#[from] memory::StoreError),
    #[error(transparent)]
    Model(#[from] crate::llm::LlmError),
}

/// The belief-revision service: the store and the judge (none offline).
pub struct Beliefs {
    db: Db,
    judge: Option<Arc<dyn Judge>>,
}

impl Beliefs {
    pub fn new(db: Db, judge: Option<Arc<dyn Judge>>) -> Self {
        Beliefs { db, judge }
    }

    /// The live records the judge says `new` replaces, with its reasons;
    /// empty without a judge or candidates.
    async fn verdict(
        &self,
        new: &memory::MemoryRecord,
    ) -> Result<Vec<(memory::MemoryRecord, String)>, BeliefError> {
        let Some(judge) = self.judge.clone() else {
            return Ok(Vec::new());
        };
        let candidates: Vec<_> = self
            .db
            .records()
            .related_active(new, JUDGE_CANDIDATES)
            .await?
            .into_iter()
            .map(|(r, _)| r)
            .filter(|r| r.said_at <= new.said_at && r.id != new.id)
            .filter(|r| same_topic(&new.content, &r.content) || same_family(new, r))
            .collect();
        if candidates.is_empty() {
            return Ok(Vec::new());
        }
        let verdict = judge.judge(new, &candidates).await?;
        Ok(verdict
            .into_iter()
            .filter_map(|v| match candidates.iter().find(|c| c.id == v.id) {
                Some(c) => Some((c.clone(), v.reason)),
                None => {
                    tracing::warn!(
                        id = v.id,
                        "judge named a record outside its candidates; ignored"
                    );
                    None
                }
            })
            .collect())
    }

    /// A person's own live records the judge says the proposal `id`
    /// conflicts with: asked of the person with the proposal, never retired
    /// by the judge (docs/memory.md, "Contradictions are asked"). Best
    /// effort: a judge that fails proposes nothing.
    pub async fn conflicts(&self, org: &str, id: i64) -> Vec<memory::MemoryRecord> {
        let found = async {
            let new = self.db.records().get(org, id).await?;
            if !new.scope.is_personal() {
                return Ok(Vec::new());
            }
            Ok::<_, BeliefError>(
                self.verdict(&new)
                    .await?
                    .into_iter()
                    .map(|(r, _)| r)
                    .collect(),
            )
        };
        found.await.unwrap_or_else(|e| {
            tracing::warn!(error = %e, record = id, "conflict check skipped");
            Vec::new()
        })
    }

    async fn try_revise(&self, record: &Activated<'_>) -> Result<Vec<i64>, BeliefError> {
        let (org, now) = (record.org, record.now);
        let Some(judge) = self.judge.clone() else {
            return Ok(Vec::new());
        };
        // A record that became history itself (a newer value exists) retires nothing.
        if record.activation.superseded_by.is_some() {
            return Ok(Vec::new());
        }
        let new = self.db.records().get(org, record.id).await?;
        // A person's own records are never replaced by a judge: what it
        // finds is asked of them with the proposal (`conflicts`).
        if new.status != Status::Active || new.scope != Scope::AgentNotes {
            return Ok(Vec::new());
        }
        let mut retired = Vec::new();
        for (old, reason) in self.verdict(&new).await? {
            // The judge's words are about the organisation's notes; were
            // either record a person's, the reason would name no words.
            let reason = match OrgWords::of_records(&reason, &[&new, &old]) {
                Some(words) => memory::admin_text!("{}", words),
                None => personal_revision(),
            };
            let meta = RevisionMeta {
                via: Via::BeliefRevision.as_str(),
                cause: record.cause.as_str(),
                run_id: record.run_id,
                reason: &reason,
                model: Some(judge.provenance().model),
                prompt_version: judge.provenance().prompt_version,
            };
            match self
                .db
                .records()
                .retire(org, old.id, new.id, &meta, now)
                .await?
            {
                Retirement::Retired { revision } => {
                    tracing::info!(retired = old.id, by = new.id, revision, "belief revision");
                    retired.push(old.id);
                }
                Retirement::Refused(why) => {
                    tracing::info!(
                        retired = old.id,
                        by = new.id,
                        refused = why.as_str(),
                        "belief revision refused"
                    );
                }
            }
        }
        Ok(retired)
    }
}

#[async_trait::async_trait]
impl Revise for Beliefs {
    /// Ask the judge which records record `id` replaces, and retire them. Best
    /// effort: the write stands whatever happens here; failures are logged.
    async fn revise(&self, record: &Activated<'_>) -> Vec<i64> {
        match self.try_revise(record).await {
            Ok(retired) => retired,
            Err(e) => {
                tracing::warn!(error = %e, record = record.id, "belief revision skipped");
                Vec::new()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::same_topic;

    #[test]
    fn only_records_sharing_a_topic_are_judged() {
        assert!(!same_topic(
            "Deploys to production need a second reviewer and happen only before 15:00.",
            "The VPN endpoint is vpn.example.com, port 443."
        ));
        assert!(same_topic(
            "Remote access goes through the VPN at vpn2.example.com",
            "The VPN gateway is vpn1.example.com"
        ));
        assert!(!same_topic(
            "Always use pg-replica-02 for the nightly export",
            "Always use example_archive for the monthly digest"
        ));
        assert!(same_topic(
            "Always use example_orders for the weekly digest",
            "Always use example_archive for the weekly digest"
        ));
        assert!(same_topic(
            "The weekly sales report is now built from sales_2026",
            "The weekly sales report is built from the table sales_2025 every Monday."
        ));
    }

    /// Notes in another language than English share its function words
    /// whatever they are about: those words make no topic.
    #[test]
    fn function_words_of_any_language_make_no_topic() {
        for (new, old) in [
            (
                "De lagertanks LT-1 t/m LT-6 mogen alleen gereinigd worden door iemand met het CIP-certificaat.",
                "Rondleidingen door de brouwerij: maximaal 18 bezoekers per groep, en alleen met dichte schoenen.",
            ),
            (
                "Die Sauna ist montags geschlossen, Aufgüsse gibt es ab 16 Uhr.",
                "Fundsachen bleiben 14 Tage an der Kasse, danach gehen sie ans Fundbüro.",
            ),
            (
                "Przepustki wydaje portiernia, ale tylko do 16:00.",
                "Paczki odbiera się w magazynie, ale nie w weekendy.",
            ),
        ] {
            assert!(!same_topic(new, old), "{new}");
        }
        assert!(same_topic(
            "Batches lageren voortaan minimaal 28 dagen voordat er gebotteld wordt.",
            "Vanaf nu geldt voor alle batches: minimaal 21 dagen lageren."
        ));
    }

    /// Amounts counted in one currency are not one topic: the currency's
    /// name makes none. Phrased for this test.
    #[test]
    fn a_currency_makes_no_topic() {
        assert!(!same_topic(
            "Parkeringsbevis koster 12 EUR om dagen og købes i receptionen.",
            "Hotel rooms up to 140 EUR a night are booked without approval."
        ));
        assert!(same_topic(
            "Hotel rooms up to 160 EUR a night are booked without approval.",
            "Hotel rooms up to 140 EUR a night are booked without approval."
        ));
    }

    /// A question in another language may be about a note by a name or a
    /// word of one root; one that shares nothing with it is not. Phrased
    /// for this test.
    #[test]
    fn what_a_message_may_be_about() {
        use super::may_be_about;
        let note = "Laboratório Vidal collects the samples at reception on Mondays.";
        assert!(may_be_about(
            "Laboratuvar numuneleri ne zaman alıyor?",
            note
        ));
        assert!(may_be_about(
            "À quelle heure passe le coursier de l'Vidal ?",
            note
        ));
        assert!(!may_be_about("Jaki jest kod do wifi w biurze?", note));
        // Function words and a currency alone relate nothing.
        assert!(!may_be_about(
            "Wo parke ich mit dem Firmenwagen, und ist das in EUR?",
            "Die Kantine hat bis 14 Uhr offen, ein Essen sind 6 EUR."
        ));
        assert!(!may_be_about(
            "What is the code of the bike shed?",
            "The on-call phone for the weekend is 0151 2231 4478."
        ));
    }

    /// Every language steward answers in has a list: `stop_words::get`
    /// panics on a language it does not know.
    #[test]
    fn every_answered_language_has_function_words() {
        assert!(super::FUNCTION_WORDS.contains("het") && super::FUNCTION_WORDS.contains("ikke"));
    }
}
