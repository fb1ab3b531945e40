//! The scrubber of personal data: what everyone in a work role shares, and
//! what a skill learns from people's corrections, holds no personal data and
//! no ids. A text is refused, before anything is stored, when it holds a user
//! id of any channel (a Discord snowflake or `<@…>` mention, a Teams `29:…`
//! id, a stored id such as `discord:…` or `cli:…`), an e-mail address, a
//! phone number (digits with separators, or spelled out: [`NUMBER_WORDS`]),
//! the name of a paired person, a special-category word
//! ([`SPECIAL_CATEGORY`]) or a credential (`credentials::credential_in`).
//!
//! Names and words are matched on the text folded ([`fold_words`]): NFKC,
//! lower-case, the Unicode confusable skeleton of each letter not ASCII
//! (UTS #39, so a Cyrillic `А` or a Greek `Α` reads as a Latin `a`), accents and invisible characters
//! dropped, and letters written one by one (`A l i c e`, `A.l.i.c.e`)
//! read together.

use crate::credentials::{credential_in, Credential};
use regex::Regex;
use std::sync::OnceLock;
use unicode_normalization::{char::is_combining_mark, UnicodeNormalization};
use unicode_security::confusable_detection::skeleton;

/// Why a text may not enter role memory or a skill.
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
    #[error("role memory holds nothing about a person's {}", .0.as_str())]
    SpecialCategory(SpecialCategory),
    #[error("role memory never keeps {}", .0.as_str())]
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
            ScrubRefusal::SpecialCategory(_) => "holds_special_category",
            ScrubRefusal::Credential(_) => "holds_credential",
            ScrubRefusal::Empty => "empty",
        }
    }
}

/// The special categories of personal data (GDPR art. 9) the scrubber knows
/// words of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpecialCategory {
    Health,
    Religion,
    TradeUnion,
    SexualOrientation,
}

impl SpecialCategory {
    pub fn as_str(self) -> &'static str {
        match self {
            SpecialCategory::Health => "health",
            SpecialCategory::Religion => "religion",
            SpecialCategory::TradeUnion => "trade-union membership",
            SpecialCategory::SexualOrientation => "sexual orientation",
        }
    }
}

/// The words (or phrases) of each special category, matched as whole words
/// on the folded text; English first, then a few Portuguese and Spanish
/// ones. Deliberately small: a word here refuses any text holding it, so a
/// word with a common other sense ("union" of two queries, "aids" the verb)
/// is listed only in a phrase.
pub const SPECIAL_CATEGORY: &[(SpecialCategory, &[&str])] = &[
    (
        SpecialCategory::Health,
        &[
            "chemo",
            "chemotherapy",
            "cancer",
            "tumour",
            "tumor",
            "diagnosis",
            "diagnosed",
            "hiv",
            "pregnant",
            "pregnancy",
            "surgery",
            "miscarriage",
            "depression",
            "diabetes",
            "dementia",
            "epilepsy",
            "psychiatric",
            "antidepressants",
            "rehab",
            "quimio",
            "quimioterapia",
            "gravida",
            "embarazada",
            "cirurgia",
            "cirugia",
        ],
    ),
    (
        SpecialCategory::Religion,
        &[
            "religion",
            "religious",
            "muslim",
            "christian",
            "jewish",
            "hindu",
            "buddhist",
            "catholic",
            "atheist",
        ],
    ),
    (
        SpecialCategory::TradeUnion,
        &[
            "trade union",
            "labour union",
            "labor union",
            "union member",
            "union membership",
            "union rep",
            "sindicato",
        ],
    ),
    (
        SpecialCategory::SexualOrientation,
        &[
            "gay",
            "lesbian",
            "bisexual",
            "transgender",
            "sexual orientation",
            "homosexual",
        ],
    ),
];

/// Digits written as words, in English, Portuguese, Spanish, French and
/// German (folded: lower-case, no accents); a run of them spelling at least
/// [`SPELLED_DIGITS`] digits is a phone number. "double" and "triple" repeat
/// the next digit.
pub const NUMBER_WORDS: &[&str] = &[
    // English.
    "zero", "oh", "o", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
    // Portuguese.
    "um", "uma", "dois", "duas", "tres", "quatro", "cinco", "seis", "sete", "oito", "nove",
    // Spanish.
    "cero", "uno", "dos", "cuatro", "siete", "ocho", "nueve", // French.
    "un", "deux", "trois", "quatre", "cinq", "sept", "huit", "neuf", // German.
    "null", "eins", "zwei", "zwo", "drei", "vier", "funf", "sechs", "sieben", "acht", "neun",
];

/// Digits a run of number words must spell to be a phone number.
pub const SPELLED_DIGITS: usize = 7;

struct Patterns {
    user_id: Vec<Regex>,
    email: Regex,
    phone: Regex,
    special: Vec<(SpecialCategory, Vec<String>)>,
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
        let special = SPECIAL_CATEGORY
            .iter()
            .flat_map(|(c, words)| words.iter().map(|w| (*c, fold_words(w))))
            .collect();
        Some(Patterns {
            user_id,
            email: Regex::new(r"(?i)\b[A-Z0-9._%+\-]+@[A-Z0-9.\-]+\.[A-Z]{2,}\b").ok()?,
            // An international number, or 9+ digits in groups.
            phone: Regex::new(
                r"(?:\+\d[\d\s().\-]{7,}\d)|(?:\(?\b\d{2,4}\)?[\s.\-]\d{3,4}[\s.\-]\d{3,4}\b)",
            )
            .ok()?,
            special,
        })
    })
    .as_ref()
}

/// Characters that show nothing (zero-width spaces and joiners, the soft
/// hyphen, the word joiner, the byte-order mark): dropped before a text is
/// split into words, so `Al\u{200B}ice` is one word.
fn invisible(c: char) -> bool {
    matches!(c, '\u{00AD}' | '\u{180E}' | '\u{200B}'..='\u{200F}' | '\u{2060}'..='\u{2064}' | '\u{FEFF}')
}

/// `text` in NFKC, without invisible characters.
fn normal(text: &str) -> String {
    text.nfkc().filter(|c| !invisible(*c)).collect()
}

/// One word folded: each letter lower-case and, unless ASCII, its
/// confusable skeleton (taken before lower-casing when that gives ASCII, so
/// a Greek `Ζ` reads `z`; after it otherwise); accents dropped. ASCII is
/// only lower-cased: the skeleton of `I` is `l`, which would part `ALICE`
/// from `Alice`.
fn fold_word(word: &str) -> String {
    let mut out = String::new();
    let mut buf = [0u8; 4];
    for c in word.chars() {
        if c.is_ascii() {
            out.push(c.to_ascii_lowercase());
            continue;
        }
        let upper: String = skeleton(c.encode_utf8(&mut buf))
            .collect::<String>()
            .to_lowercase();
        if upper.is_ascii() {
            out.push_str(&upper);
            continue;
        }
        let lower: String = c.to_lowercase().collect();
        out.push_str(&skeleton(&lower).collect::<String>().to_lowercase());
    }
    out.nfd().filter(|c| !is_combining_mark(*c)).collect()
}

/// The words of `text` as the scrubber compares them: NFKC, lower-case,
/// confusable skeleton, no accents; split at anything not a letter or a
/// digit.
pub fn fold_words(text: &str) -> Vec<String> {
    normal(text)
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(fold_word)
        .collect()
}

/// The words of `text` folded, each run of two or more one-letter words
/// (`a l i c e`) joined into one; and those joined runs.
fn collapsed(words: &[String]) -> (Vec<String>, Vec<String>) {
    let mut out: Vec<String> = Vec::new();
    let mut runs = Vec::new();
    let mut run = String::new();
    let mut letters = 0;
    let flush =
        |out: &mut Vec<String>, runs: &mut Vec<String>, run: &mut String, letters: &mut usize| {
            if *letters >= 2 {
                runs.push(run.clone());
            }
            if !run.is_empty() {
                out.push(std::mem::take(run));
            }
            *letters = 0;
        };
    for w in words {
        if is_one_letter(w) {
            run.push_str(w);
            letters += 1;
        } else {
            flush(&mut out, &mut runs, &mut run, &mut letters);
            out.push(w.clone());
        }
    }
    flush(&mut out, &mut runs, &mut run, &mut letters);
    (out, runs)
}

/// Whether a folded word is one letter.
fn is_one_letter(w: &str) -> bool {
    w.chars().count() == 1
}

/// A text's words, folded, ready for matching names and phrases.
struct Words {
    plain: Vec<String>,
    joined: Vec<String>,
    runs: Vec<String>,
}

impl Words {
    fn of(text: &str) -> Self {
        let plain = fold_words(text);
        let (joined, runs) = collapsed(&plain);
        Words {
            plain,
            joined,
            runs,
        }
    }

    /// Whether `phrase` (folded words) appears as consecutive whole words,
    /// or inside letters written one by one.
    fn holds(&self, phrase: &[String]) -> bool {
        if phrase.is_empty() {
            return false;
        }
        let windows = |words: &[String]| words.windows(phrase.len()).any(|w| w == phrase);
        if windows(&self.plain) || windows(&self.joined) {
            return true;
        }
        let whole = phrase.concat();
        whole.chars().count() >= 3 && self.runs.iter().any(|r| r.contains(&whole))
    }
}

/// Whether `text` spells a phone number in words: a run of number words
/// (and digit groups) spelling at least [`SPELLED_DIGITS`] digits, at least
/// two of them words.
fn spelled_phone(text: &str) -> bool {
    let words = normal(text)
        .to_lowercase()
        .nfd()
        .filter(|c| !is_combining_mark(*c))
        .collect::<String>();
    let (mut digits, mut spelled) = (0usize, 0usize);
    let mut repeat = 1;
    for w in words
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        if w == "double" || w == "triple" {
            repeat = if w == "double" { 2 } else { 3 };
            continue;
        }
        if NUMBER_WORDS.contains(&w) {
            digits += repeat;
            spelled += 1;
        } else if w.chars().all(|c| c.is_ascii_digit()) {
            digits += w.len();
        } else {
            digits = 0;
            spelled = 0;
        }
        repeat = 1;
        if digits >= SPELLED_DIGITS && spelled >= 2 {
            return true;
        }
    }
    false
}

/// Refuse `text` if it holds personal data or ids; `names` are the display
/// names of the organisation's paired people, matched as whole words on the
/// folded text (see the module's documentation). Role memory and the
/// corrections a skill learns from both pass it.
pub fn scrub(text: &str, names: &[String]) -> Result<(), ScrubRefusal> {
    if text.trim().is_empty() {
        return Err(ScrubRefusal::Empty);
    }
    let normal_text = normal(text);
    if let Some(kind) = credential_in(text).or_else(|| credential_in(&normal_text)) {
        return Err(ScrubRefusal::Credential(kind));
    }
    // Fail closed: without its patterns the scrubber lets nothing through.
    let Some(p) = patterns() else {
        return Err(ScrubRefusal::UserId);
    };
    if p.email.is_match(&normal_text) {
        return Err(ScrubRefusal::Email);
    }
    if p.user_id.iter().any(|re| re.is_match(&normal_text)) {
        return Err(ScrubRefusal::UserId);
    }
    if p.phone.is_match(&normal_text) || spelled_phone(text) {
        return Err(ScrubRefusal::Phone);
    }
    let words = Words::of(text);
    for name in names {
        let parts: Vec<String> = fold_words(name)
            .into_iter()
            .filter(|w| w.chars().count() >= 2)
            .collect();
        // The whole name, as consecutive words.
        if words.holds(&parts) {
            return Err(ScrubRefusal::PersonName);
        }
    }
    if let Some((category, _)) = p.special.iter().find(|(_, phrase)| words.holds(phrase)) {
        return Err(ScrubRefusal::SpecialCategory(*category));
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

    /// The security review's examples (issue 45, finding 7), then variants
    /// written before the scrubber was tuned.
    #[test]
    fn spaced_confusable_spelled_and_special_category_data_is_refused() {
        let names = vec![
            "Alice".to_string(),
            "Zoe".to_string(),
            "Ana Lima".to_string(),
        ];
        use super::SpecialCategory::{Health, Religion, SexualOrientation, TradeUnion};
        use ScrubRefusal::{Email, PersonName, Phone, SpecialCategory as Special};
        let password = ScrubRefusal::Credential(Credential::Password);
        let rows: &[(&str, ScrubRefusal)] = &[
            // The review's examples.
            ("ask A l i c e before the deploy", PersonName),
            ("\u{0410}lice approves refunds", PersonName),
            ("Zoe is on chemo, so route her tickets", PersonName),
            ("Our colleague is on chemo this month", Special(Health)),
            (
                "call five five five, one two three, four five six seven",
                Phone,
            ),
            ("Senha do servidor: Pato-Verde77", password.clone()),
            // Held out.
            ("A.l.i.c.e signs the refunds", PersonName),
            ("ask a-l-i-c-e first", PersonName),
            ("ask the a l i c e team", PersonName),
            ("\u{0391}lice approves refunds", PersonName),
            ("\u{FF21}\u{FF4C}\u{FF49}\u{FF43}\u{FF45} approves refunds", PersonName),
            ("Al\u{200B}ice approves refunds", PersonName),
            ("ALICE approves refunds", PersonName),
            ("Alice's tickets go first", PersonName),
            ("Z\u{043E}\u{00EB} reviews the rubric", PersonName),
            ("\u{0396}oe reviews the rubric", PersonName),
            ("ask A n a L i m a", PersonName),
            ("the new hire had surgery last week", Special(Health)),
            ("she is pregnant, keep night shifts off", Special(Health)),
            ("he was diagnosed with diabetes", Special(Health)),
            ("the driver is HIV positive", Special(Health)),
            ("the tester is on c h e m o", Special(Health)),
            ("the night nurse is Muslim", Special(Religion)),
            ("the cashier is a union member", Special(TradeUnion)),
            ("the cook is gay", Special(SexualOrientation)),
            ("call nine one seven, five five five, oh one two three", Phone),
            ("ring double five one two three four five", Phone),
            ("call 555 one two three four five six seven", Phone),
            ("ligue nove nove oito sete seis cinco quatro tr\u{00EA}s", Phone),
            ("llama al seis cinco cuatro tres dos uno cero", Phone),
            ("ruf null eins sieben sechs, f\u{00FC}nf vier drei zwei", Phone),
            ("call \u{FF15}\u{FF15}\u{FF15}-\u{FF11}\u{FF12}\u{FF13}-\u{FF14}\u{FF15}\u{FF16}\u{FF17}", Phone),
            ("write to ana\u{FF20}example.com", Email),
            ("senha: Pato-Verde77", password.clone()),
        ];
        for (text, want) in rows {
            assert_eq!(scrub(text, &names).err().as_ref(), Some(want), "{text}");
        }
        for (text, code) in [
            ("Zoe is on chemo", "holds_person_name"),
            ("the tester is on chemo", "holds_special_category"),
        ] {
            assert_eq!(scrub(text, &names).map_err(|e| e.code()), Err(code));
        }
    }

    #[test]
    fn ordinary_procedures_pass_the_scrubber() {
        let names = vec![
            "Alice".to_string(),
            "Zoe".to_string(),
            "Ana Lima".to_string(),
        ];
        for text in [
            "Use the five-step checklist before the deploy",
            "One or two reviewers sign off each release",
            "Run steps one, two and three, then four",
            "Take the union of both queries",
            "Malice is never assumed in a review",
            "Use the alias list for the mailboxes",
            "Diagnose the outage before restarting anything",
            "A/B tests run for two weeks",
            "Totals are in EUR, not USD",
            "an analyst checks the lineage first",
            "Leave refunds out of the daily report",
        ] {
            assert_eq!(scrub(text, &names), Ok(()), "{text}");
        }
    }
}
