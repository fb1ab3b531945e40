//! The offline rules' words: a message as the rules compare it, and the
//! lexicon's classes (`prompts::lexicon`, one row per language) found in it.
//! The rules are shapes over these classes, so what one language's row holds
//! every rule reads in that language.

use prompts::lexicon::{self, Class};
use std::sync::LazyLock;

/// The lower-case words of `s` (letters, digits, apostrophes and hyphens).
pub(super) fn words_of(s: &str) -> Vec<String> {
    // Turkish "İ" lower-cases to "i" and a combining dot: "İspanyolca" is "ispanyolca".
    s.to_lowercase()
        .replace("i\u{307}", "i")
        .replace('’', "'")
        .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '-'))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// Whether `words` open with the words `m`.
pub(super) fn opens_with<S: AsRef<str>>(words: &[String], m: &[S]) -> bool {
    words.len() >= m.len() && words.iter().zip(m).all(|(w, m)| w == m.as_ref())
}

/// A class's phrases: those of spaced languages cut into words (longest
/// first, so "from now on" is found before "from"), the others whole.
struct Phrases {
    spaced: Vec<Vec<String>>,
    unspaced: Vec<String>,
}

static CLASSES: LazyLock<Vec<(Class, Phrases)>> = LazyLock::new(|| {
    Class::ALL
        .iter()
        .map(|&class| {
            let mut spaced: Vec<Vec<String>> = Vec::new();
            let mut unspaced = Vec::new();
            for (phrase, is_spaced) in lexicon::phrases(class) {
                if is_spaced {
                    spaced.push(words_of(phrase));
                } else {
                    unspaced.push(phrase.to_string());
                }
            }
            spaced.sort_by_key(|p| std::cmp::Reverse(p.len()));
            spaced.dedup();
            (class, Phrases { spaced, unspaced })
        })
        .collect()
});

fn phrases(class: Class) -> &'static Phrases {
    static EMPTY: Phrases = Phrases {
        spaced: Vec::new(),
        unspaced: Vec::new(),
    };
    CLASSES
        .iter()
        .find(|(c, _)| *c == class)
        .map_or(&EMPTY, |(_, p)| p)
}

/// Every place a phrase of `class` stands in `words`, in order: its first
/// word and its length (the longest phrase there).
fn places<'w>(class: Class, words: &'w [String]) -> impl Iterator<Item = (usize, usize)> + 'w {
    let spaced = &phrases(class).spaced;
    (0..words.len()).filter_map(move |at| {
        spaced
            .iter()
            .find(|p| !p.is_empty() && opens_with(&words[at..], p))
            .map(|p| (at, p.len()))
    })
}

/// Where a phrase of `class` first stands in `words`.
pub(super) fn find(class: Class, words: &[String]) -> Option<(usize, usize)> {
    places(class, words).next()
}

/// Every place a phrase of `class` stands in `words`.
pub(super) fn find_all(class: Class, words: &[String]) -> Vec<(usize, usize)> {
    places(class, words).collect()
}

/// Whether `s` holds a phrase of `class`, in any language of the lexicon.
pub(super) fn holds(class: Class, s: &str) -> bool {
    holds_unspaced(class, s) || find(class, &words_of(s)).is_some()
}

/// Whether `word` starts like a phrase of `class` ("antwortest" is of
/// replying: the class holds word starts).
pub(super) fn starts_like(class: Class, word: &str) -> bool {
    phrases(class)
        .spaced
        .iter()
        .any(|p| p.len() == 1 && word.starts_with(p[0].as_str()))
}

/// Whether `words` (or `s`, for unspaced languages) hold a one-off act in a
/// language that drops its pronouns, whose forms say the speaker acted
/// ("comprei", "kupiłem").
pub(super) fn speakers_act(words: &[String], s: &str) -> bool {
    // Cut into words once a process, not once a clause.
    static ACTS: LazyLock<(Vec<Vec<String>>, Vec<String>)> = LazyLock::new(|| {
        let mut acts = (Vec::new(), Vec::new());
        for l in lexicon::lexicons().iter().filter(|l| l.pro_drop) {
            for p in l.phrases(Class::OneOff) {
                if l.spaced {
                    acts.0.push(words_of(p));
                } else {
                    acts.1.push(p.clone());
                }
            }
        }
        acts
    });
    let (spaced, unspaced) = &*ACTS;
    (0..words.len()).any(|at| spaced.iter().any(|p| opens_with(&words[at..], p)))
        || unspaced.iter().any(|p| s.contains(p.as_str()))
}

/// Whether `word` is a one-word phrase of `class` ("mig" is the speaker).
pub(super) fn is_word(class: Class, word: &str) -> bool {
    phrases(class)
        .spaced
        .iter()
        .any(|p| p.len() == 1 && p[0] == word)
}

/// Whether `s` holds an unspaced phrase of `class` ("答え", "回复").
pub(super) fn holds_unspaced(class: Class, s: &str) -> bool {
    !s.is_ascii()
        && phrases(class)
            .unspaced
            .iter()
            .any(|p| s.contains(p.as_str()))
}

/// `s` without the phrase of `class` it opens with, when a space or a comma
/// follows it ("could you …", "per favore, …"), and the code of the
/// language whose phrase it was.
pub(super) fn strip_opening(class: Class, s: &str) -> Option<(&str, &'static str)> {
    let lower = s.to_lowercase();
    // Lower-casing kept every byte where it was: the cut below is safe.
    if lower.len() != s.len() {
        return None;
    }
    let mut best: Option<(usize, &'static str)> = None;
    for l in lexicon::lexicons().iter().filter(|l| l.spaced) {
        for p in l.phrases(class) {
            let whole = lower.starts_with(p.as_str()) && lower[p.len()..].starts_with([' ', ',']);
            if whole && best.is_none_or(|(len, _)| p.len() > len) {
                best = Some((p.len(), l.code.as_str()));
            }
        }
    }
    best.map(|(len, code)| (s[len..].trim_start_matches([',', ' ']), code))
}

/// `s` without a phrase of `class` it closes with ("…, please").
pub(super) fn strip_closing(class: Class, s: &str) -> Option<&str> {
    let lower = s.to_lowercase();
    if lower.len() != s.len() {
        return None;
    }
    lexicon::phrases(class).find_map(|(p, spaced)| {
        let before = lower.strip_suffix(p).filter(|_| spaced)?;
        before
            .ends_with([' ', ','])
            .then(|| s[..before.len()].trim_end_matches([',', ' ']))
    })
}

/// The name of a language in `body` ("inglese", "по-английски", "日本語"),
/// as written there.
pub(super) fn language_named(body: &str) -> Option<String> {
    if !body.is_ascii() {
        if let Some((name, _, _)) =
            lexicon::language_names().find(|(n, _, spaced)| !spaced && body.contains(*n))
        {
            return Some(name.to_string());
        }
    }
    let words = words_of(body);
    // A word, or its part after a hyphen ("по-русски": "in Russian").
    let found = words
        .iter()
        .flat_map(|w| std::iter::once(w.as_str()).chain(w.split('-').skip(1)))
        .find(|w| lexicon::language_names().any(|(n, _, spaced)| spaced && w.starts_with(n)))?;
    // As written ("Deutsch", "español").
    Some(
        body.split(|c: char| !(c.is_alphanumeric() || c == '-'))
            .flat_map(|w| std::iter::once(w).chain(w.split('-').skip(1)))
            .find(|w| w.to_lowercase().replace("i\u{307}", "i") == found)
            .unwrap_or(found)
            .to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_found_in_every_language_of_the_lexicon() {
        assert!(holds(Class::Standing, "Svar mig altid kort"));
        assert!(holds(Class::Standing, "以后用中文"));
        assert!(!holds(Class::Standing, "Where is the print room?"));
        // Danish and Swedish share "kan du": either language is right.
        assert_eq!(
            strip_opening(Class::Request, "Kan du svara kort?").map(|(rest, _)| rest),
            Some("svara kort?")
        );
        assert_eq!(
            strip_opening(Class::Request, "per favore, rispondi"),
            Some(("rispondi", "it"))
        );
        assert_eq!(strip_opening(Class::Request, "Canal is open"), None);
        assert_eq!(
            strip_closing(Class::Courtesy, "Svar kort, tak"),
            Some("Svar kort")
        );
        assert_eq!(language_named("svar på dansk").as_deref(), Some("dansk"));
        assert_eq!(language_named("по-английски").as_deref(), Some("английски"));
        assert!(starts_like(Class::Reply, "antwortest"));
    }
}
