//! How people say things to steward, language by language
//! (`texts/lexicon.toml`): the closed classes of words the offline rules
//! read a message by — request forms, standing words, verbs of replying,
//! asking to be called something, the speaker's own words, one-off times and
//! acts, and what each language calls each language. A rule is a shape over
//! classes, so it reads every language whose row is complete; a test holds
//! every language of `answers.txt` to a complete row.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// A class of words, filled for every language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// How a request opens ("could you").
    Request,
    /// What may close a request ("please").
    Courtesy,
    /// What makes an instruction standing ("always").
    Standing,
    /// Word starts of replying and of replies ("answer").
    Reply,
    /// Asking to be called something; the name follows ("call me").
    Naming,
    /// Words a speaker uses of themselves ("I", "me").
    Speaker,
    /// How the agent is with the speaker ("with me").
    WithMe,
    /// "When you …": before a word of replying, it makes a request standing.
    When,
    /// Saying what one prefers or would like of the agent ("i'd prefer").
    Prefer,
    /// Times that are only now ("today").
    OnlyNow,
    /// Verbs of a one-off act, said of the past ("bought").
    OneOff,
    /// Words saying a value changed ("correction", "update", "now").
    Changed,
    /// Words naming a rule or policy ("rule", "regel").
    Rule,
    /// Words naming everyone, the team ("everyone", "alle").
    Everyone,
    /// The speaker's possessive, opening what they say of theirs ("my").
    Mine,
    /// How the speaker says what they are ("i am", "jestem", "vagyok").
    Am,
    /// Whole words naming a form of the agent's replies: length, format,
    /// tone, emoji ("short", "bullet", "formal", "emojis").
    Form,
    /// Words saying the value beside them no longer holds ("not", "no
    /// longer", "instead of", "nicht mehr"): a correction's old value.
    Former,
    /// The words of [`Class::Form`] saying how long or detailed the replies
    /// are ("short", "detailed", "längre"): one subject of preferences.
    Length,
    /// How a person asks to be reminded or told what is kept ("remind me",
    /// "przypomnij mi"): a request, never a statement to keep.
    Told,
    /// The word opening what is said or known ("that", "dass", "que"): after
    /// a head naming everyone ("make sure everyone knows that …") the rule.
    That,
}

impl Class {
    /// Every class, in the file's order.
    pub const ALL: [Class; 21] = [
        Class::Request,
        Class::Courtesy,
        Class::Standing,
        Class::Reply,
        Class::Naming,
        Class::Speaker,
        Class::WithMe,
        Class::When,
        Class::Prefer,
        Class::OnlyNow,
        Class::OneOff,
        Class::Changed,
        Class::Rule,
        Class::Everyone,
        Class::Mine,
        Class::Am,
        Class::Form,
        Class::Former,
        Class::Length,
        Class::Told,
        Class::That,
    ];
}

/// One language's row, as the file holds it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Row {
    pro_drop: bool,
    spaced: bool,
    request: Vec<String>,
    courtesy: Vec<String>,
    standing: Vec<String>,
    reply: Vec<String>,
    naming: Vec<String>,
    speaker: Vec<String>,
    with_me: Vec<String>,
    when: Vec<String>,
    prefer: Vec<String>,
    only_now: Vec<String>,
    one_off: Vec<String>,
    changed: Vec<String>,
    rule: Vec<String>,
    everyone: Vec<String>,
    mine: Vec<String>,
    am: Vec<String>,
    form: Vec<String>,
    former: Vec<String>,
    length: Vec<String>,
    told: Vec<String>,
    /// Empty where what is said is marked by an ending or a particle after
    /// it (Japanese "と", Korean "-고") or by a comma alone (Chinese).
    that: Vec<String>,
    names: BTreeMap<String, Vec<String>>,
}

/// One language of the lexicon.
#[derive(Debug)]
pub struct Lexicon {
    /// Its code, as in `answers.txt` (`en`, `da`, …).
    pub code: String,
    /// Written with spaces between words: its phrases are matched word by
    /// word; otherwise anywhere in the text.
    pub spaced: bool,
    /// Drops its pronouns: its one-off acts are the speaker's own forms
    /// ("comprei"), so the verb says who acted.
    pub pro_drop: bool,
    row: Row,
}

impl Lexicon {
    /// This language's phrases of `class`, lower case.
    pub fn phrases(&self, class: Class) -> &[String] {
        let r = &self.row;
        match class {
            Class::Request => &r.request,
            Class::Courtesy => &r.courtesy,
            Class::Standing => &r.standing,
            Class::Reply => &r.reply,
            Class::Naming => &r.naming,
            Class::Speaker => &r.speaker,
            Class::WithMe => &r.with_me,
            Class::When => &r.when,
            Class::Prefer => &r.prefer,
            Class::OnlyNow => &r.only_now,
            Class::OneOff => &r.one_off,
            Class::Changed => &r.changed,
            Class::Rule => &r.rule,
            Class::Everyone => &r.everyone,
            Class::Mine => &r.mine,
            Class::Am => &r.am,
            Class::Form => &r.form,
            Class::Former => &r.former,
            Class::Length => &r.length,
            Class::Told => &r.told,
            Class::That => &r.that,
        }
    }

    /// What this language calls each language of the table, by code.
    pub fn names(&self) -> &BTreeMap<String, Vec<String>> {
        &self.row.names
    }
}

fn parse(text: &str) -> Result<Vec<Lexicon>, toml::de::Error> {
    let rows: BTreeMap<String, Row> = toml::from_str(text)?;
    Ok(rows
        .into_iter()
        .map(|(code, row)| Lexicon {
            code,
            spaced: row.spaced,
            pro_drop: row.pro_drop,
            row,
        })
        .collect())
}

static LEXICONS: LazyLock<Vec<Lexicon>> = LazyLock::new(|| {
    // The file is compiled in: a test parses it, so this never fails in a release.
    parse(include_str!("../texts/lexicon.toml")).unwrap_or_else(|e| {
        eprintln!("steward: prompts/texts/lexicon.toml does not parse: {e}");
        Vec::new()
    })
});

/// Every language of the lexicon.
pub fn lexicons() -> &'static [Lexicon] {
    &LEXICONS
}

/// Every language's phrases of `class`, with whether that language is spaced.
pub fn phrases(class: Class) -> impl Iterator<Item = (&'static str, bool)> {
    LEXICONS
        .iter()
        .flat_map(move |l| l.phrases(class).iter().map(|p| (p.as_str(), l.spaced)))
}

/// Every name of a language in every language, with the language it names
/// and whether the naming language is spaced.
pub fn language_names() -> impl Iterator<Item = (&'static str, &'static str, bool)> {
    LEXICONS.iter().flat_map(|l| {
        l.row.names.iter().flat_map(move |(code, names)| {
            names
                .iter()
                .map(move |n| (n.as_str(), code.as_str(), l.spaced))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lexicon_parses() {
        parse(include_str!("../texts/lexicon.toml")).expect("lexicon.toml parses");
    }

    /// A language is read as well as its row is complete: every language
    /// steward answers in has every class filled and names every language.
    #[test]
    fn every_language_fills_every_class() {
        let answered: Vec<&str> = crate::answers::languages().iter().map(|l| l.code).collect();
        let lexicon: Vec<&str> = lexicons().iter().map(|l| l.code.as_str()).collect();
        for code in &answered {
            assert!(lexicon.contains(code), "{code} has no row in lexicon.toml");
        }
        for l in lexicons() {
            assert!(
                answered.contains(&l.code.as_str()),
                "{} answers nothing in answers.txt",
                l.code
            );
            for class in Class::ALL {
                // A language that drops its pronouns may say "I am" by an
                // ending alone (Turkish "vejetaryenim"): no word to match.
                let by_ending = class == Class::Am && l.pro_drop;
                // What is said marked after it, or by a comma alone.
                let said_before =
                    class == Class::That && ["ja", "ko", "zh"].contains(&l.code.as_str());
                assert!(
                    by_ending || said_before || !l.phrases(class).is_empty(),
                    "{}: {class:?} is empty",
                    l.code
                );
                for p in l.phrases(class) {
                    assert_eq!(p, &p.to_lowercase(), "{}: {p:?} is not lower case", l.code);
                }
            }
            for code in &answered {
                assert!(
                    l.names().get(*code).is_some_and(|n| !n.is_empty()),
                    "{} does not name {code}",
                    l.code
                );
            }
        }
    }

    /// A length is a form of the replies: a request naming one is about how
    /// to answer the speaker, whichever class the rules read it by.
    #[test]
    fn every_length_is_a_form() {
        for l in lexicons() {
            for word in l.phrases(Class::Length) {
                assert!(
                    l.phrases(Class::Form).contains(word),
                    "{}: {word} is a length but not a form",
                    l.code
                );
            }
        }
    }
}
