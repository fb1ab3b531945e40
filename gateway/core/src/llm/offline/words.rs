//! The offline rules' words: a message as the rules compare it, and the
//! lexicon's classes (`prompts::lexicon`, one row per language) found in it.
//! The rules are shapes over these classes, so what one language's row holds
//! every rule reads in that language.

use aho_corasick::AhoCorasick;
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use prompts::lexicon::{self, Class};
use std::borrow::Cow;
use std::sync::LazyLock;

/// The lower-case words of `s` (letters, digits, apostrophes and hyphens).
pub(super) fn words_of(s: &str) -> Vec<String> {
    split(&lowered(s)).map(str::to_string).collect()
}

/// `s` lower case, as the rules compare it.
fn lowered(s: &str) -> Cow<'_, str> {
    if s.is_ascii() {
        // No Unicode tables, and neither replacement below can apply.
        if s.bytes().any(|b| b.is_ascii_uppercase()) {
            Cow::Owned(s.to_ascii_lowercase())
        } else {
            Cow::Borrowed(s)
        }
    } else {
        // Turkish "İ" lower-cases to "i" and a combining dot: "İspanyolca" is "ispanyolca".
        Cow::Owned(s.to_lowercase().replace("i\u{307}", "i").replace('’', "'"))
    }
}

/// The words of a lowered text.
fn split(lower: &str) -> impl Iterator<Item = &str> {
    lower
        .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '-'))
        .filter(|w| !w.is_empty())
}

/// Whether `words` open with the words `m`.
pub(super) fn opens_with<S: AsRef<str>, M: AsRef<str>>(words: &[S], m: &[M]) -> bool {
    words.len() >= m.len() && words.iter().zip(m).all(|(w, m)| w.as_ref() == m.as_ref())
}

/// A class's phrases, indexed so that a message is read once, not once a
/// phrase of every language: those of spaced languages cut into words and
/// found by their first word (longest first, so "from now on" is found
/// before "from"), one-word ones in a set (whole words and word starts),
/// the unspaced ones as one automaton.
#[derive(Default)]
struct Phrases {
    spaced: Vec<Vec<String>>,
    /// A first word's phrases, as indices into `spaced` (longest first).
    by_first: HashMap<String, Vec<usize>>,
    /// The one-word phrases, and the longest of them in bytes.
    one_word: HashSet<String>,
    longest_word: usize,
    unspaced: Unspaced,
    /// The spaced languages' phrases whole and lower case, in the file's
    /// order (`strip_closing`), and each with the first language that has
    /// it (`strip_opening`), with the longest of them in bytes.
    whole: Vec<String>,
    openings: HashMap<String, &'static str>,
    longest_whole: usize,
}

/// Phrases matched anywhere in a text (languages written without spaces).
#[derive(Default)]
struct Unspaced {
    any: Option<AhoCorasick>,
}

impl Unspaced {
    fn new<S: AsRef<[u8]>>(phrases: &[S]) -> Unspaced {
        let any = (!phrases.is_empty())
            .then(|| AhoCorasick::new(phrases))
            .and_then(|built| {
                built
                    .map_err(|e| tracing::error!(error = %e, "the lexicon's unspaced phrases"))
                    .ok()
            });
        Unspaced { any }
    }

    fn in_text(&self, s: &str) -> bool {
        self.any.as_ref().is_some_and(|any| any.is_match(s))
    }

    /// Where the first phrase stands in `s`: its byte range.
    fn first_in(&self, s: &str) -> Option<std::ops::Range<usize>> {
        self.any.as_ref()?.find(s).map(|m| m.range())
    }
}

/// `spaced` (phrases cut into words) indexed by their first word, in order.
fn by_first(spaced: &[Vec<String>]) -> HashMap<String, Vec<usize>> {
    let mut index: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, p) in spaced.iter().enumerate() {
        if let Some(first) = p.first() {
            index.entry(first.clone()).or_default().push(i);
        }
    }
    index
}

impl Phrases {
    fn of(class: Class) -> Phrases {
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
        let one_word: HashSet<String> = spaced
            .iter()
            .filter(|p| p.len() == 1)
            .map(|p| p[0].clone())
            .collect();
        let mut openings: HashMap<String, &'static str> = HashMap::new();
        for l in lexicon::lexicons().iter().filter(|l| l.spaced) {
            for p in l.phrases(class) {
                openings.entry(p.clone()).or_insert(l.code.as_str());
            }
        }
        let whole: Vec<String> = lexicon::phrases(class)
            .filter(|(_, spaced)| *spaced)
            .map(|(p, _)| p.to_string())
            .collect();
        Phrases {
            by_first: by_first(&spaced),
            longest_word: one_word.iter().map(String::len).max().unwrap_or(0),
            one_word,
            spaced,
            unspaced: Unspaced::new(unspaced.as_slice()),
            longest_whole: whole.iter().map(String::len).max().unwrap_or(0),
            whole,
            openings,
        }
    }

    /// The longest phrase whose words open `words`, by its length in words.
    fn opening<S: AsRef<str>>(&self, words: &[S]) -> Option<usize> {
        let first = words.first()?;
        self.by_first
            .get(first.as_ref())?
            .iter()
            .map(|&i| self.spaced[i].as_slice())
            .find(|&p| opens_with(words, p))
            .map(<[String]>::len)
    }
}

static CLASSES: LazyLock<Vec<(Class, Phrases)>> = LazyLock::new(|| {
    Class::ALL
        .iter()
        .map(|&class| (class, Phrases::of(class)))
        .collect()
});

fn phrases(class: Class) -> &'static Phrases {
    static EMPTY: LazyLock<Phrases> = LazyLock::new(Phrases::default);
    CLASSES
        .iter()
        .find(|(c, _)| *c == class)
        .map_or(&*EMPTY, |(_, p)| p)
}

/// Every place a phrase of `class` stands in `words`, in order: its first
/// word and its length (the longest phrase there).
fn places<S: AsRef<str>>(class: Class, words: &[S]) -> impl Iterator<Item = (usize, usize)> + '_ {
    let phrases = phrases(class);
    (0..words.len()).filter_map(move |at| phrases.opening(&words[at..]).map(|len| (at, len)))
}

/// Where a phrase of `class` first stands in `words`.
pub(super) fn find<S: AsRef<str>>(class: Class, words: &[S]) -> Option<(usize, usize)> {
    places(class, words).next()
}

/// Every place a phrase of `class` stands in `words`.
pub(super) fn find_all<S: AsRef<str>>(class: Class, words: &[S]) -> Vec<(usize, usize)> {
    places(class, words).collect()
}

/// Whether `s` holds a phrase of `class`, in any language of the lexicon.
pub(super) fn holds(class: Class, s: &str) -> bool {
    if holds_unspaced(class, s) {
        return true;
    }
    // The words are only compared: no string made a word.
    let lower = lowered(s);
    let words: Vec<&str> = split(&lower).collect();
    find(class, &words).is_some()
}

/// Whether `word` starts like a phrase of `class` ("antwortest" is of
/// replying: the class holds word starts).
pub(super) fn starts_like(class: Class, word: &str) -> bool {
    let phrases = phrases(class);
    word.char_indices()
        .map(|(i, c)| i + c.len_utf8())
        .take_while(|&end| end <= phrases.longest_word)
        .any(|end| phrases.one_word.contains(&word[..end]))
}

/// Whether `words` (or `s`, for unspaced languages) hold a one-off act in a
/// language that drops its pronouns, whose forms say the speaker acted
/// ("comprei", "kupiłem").
pub(super) fn speakers_act<S: AsRef<str>>(words: &[S], s: &str) -> bool {
    /// The acts, indexed once a process as a class is.
    struct Acts {
        spaced: Vec<Vec<String>>,
        by_first: HashMap<String, Vec<usize>>,
        unspaced: Unspaced,
    }
    static ACTS: LazyLock<Acts> = LazyLock::new(|| {
        let (mut spaced, mut unspaced) = (Vec::new(), Vec::new());
        for l in lexicon::lexicons().iter().filter(|l| l.pro_drop) {
            for p in l.phrases(Class::OneOff) {
                if l.spaced {
                    spaced.push(words_of(p));
                } else {
                    unspaced.push(p.clone());
                }
            }
        }
        Acts {
            by_first: by_first(&spaced),
            spaced,
            unspaced: Unspaced::new(unspaced.as_slice()),
        }
    });
    let acts = &*ACTS;
    (0..words.len()).any(|at| {
        acts.by_first.get(words[at].as_ref()).is_some_and(|found| {
            found
                .iter()
                .any(|&i| opens_with(&words[at..], acts.spaced[i].as_slice()))
        })
    }) || acts.unspaced.in_text(s)
}

/// Whether `word` is a one-word phrase of `class` ("mig" is the speaker).
pub(super) fn is_word(class: Class, word: &str) -> bool {
    phrases(class).one_word.contains(word)
}

/// [`is_word`] of a word as written: lower case, `’` read as `'`, a copy
/// made only when the word needs one.
pub(super) fn is_word_as_said(class: Class, word: &str) -> bool {
    if word.is_ascii() {
        if word.bytes().any(|b| b.is_ascii_uppercase()) {
            return is_word(class, &word.to_ascii_lowercase());
        }
        return is_word(class, word);
    }
    is_word(class, &word.to_lowercase().replace('’', "'"))
}

/// Whether `s` holds an unspaced phrase of `class` ("答え", "回复").
pub(super) fn holds_unspaced(class: Class, s: &str) -> bool {
    !s.is_ascii() && phrases(class).unspaced.in_text(s)
}

/// Where an unspaced phrase of `class` first stands in `s` ("と呼んで" in
/// "ケンと呼んでください"): its byte range.
pub(super) fn find_unspaced(class: Class, s: &str) -> Option<std::ops::Range<usize>> {
    if s.is_ascii() {
        return None;
    }
    phrases(class).unspaced.first_in(s)
}

/// `s` without the phrase of `class` it opens with, when a space or a comma
/// follows it ("could you …", "per favore, …"), and the code of the
/// language whose phrase it was.
pub(super) fn strip_opening(class: Class, s: &str) -> Option<(&str, &'static str)> {
    let phrases = phrases(class);
    // Only the opening is compared: an ASCII text's is lower-cased alone.
    let lower = if s.is_ascii() {
        s[..s.len().min(phrases.longest_whole + 1)].to_ascii_lowercase()
    } else {
        let lower = s.to_lowercase();
        // Lower-casing kept every byte where it was: the cut below is safe.
        if lower.len() != s.len() {
            return None;
        }
        lower
    };
    // The longest phrase followed by a space or a comma.
    let (len, code) = (0..=lower.len().min(phrases.longest_whole))
        .rev()
        .filter(|&end| matches!(lower.as_bytes().get(end), Some(b' ' | b',')))
        .find_map(|end| Some((end, *phrases.openings.get(&lower[..end])?)))?;
    Some((s[len..].trim_start_matches([',', ' ']), code))
}

/// `s` without a phrase of `class` it closes with ("…, please").
pub(super) fn strip_closing(class: Class, s: &str) -> Option<&str> {
    let lower = s.to_lowercase();
    if lower.len() != s.len() {
        return None;
    }
    phrases(class).whole.iter().find_map(|p| {
        let before = lower.strip_suffix(p.as_str())?;
        before
            .ends_with([' ', ','])
            .then(|| s[..before.len()].trim_end_matches([',', ' ']))
    })
}

/// The verbs of naming, by their first four letters ("call", "llam",
/// "kall", "назы"): the first word of each spaced phrase of naming that is
/// not the speaker's and has four letters or more.
static NAMING_STEMS: LazyLock<HashSet<String>> = LazyLock::new(|| {
    lexicon::phrases(Class::Naming)
        .filter(|(_, spaced)| *spaced)
        .filter_map(|(phrase, _)| {
            words_of(phrase)
                .into_iter()
                .find(|w| !is_word(Class::Speaker, w) && w.chars().count() >= 4)
        })
        .map(|w| w.chars().take(4).collect())
        .collect()
});

/// The words that stand beside a verb of naming in its phrases, the one
/// named ("meg" of "kall meg", "mich" of "nenn mich"): no linking word
/// ("as", "by", "de").
static NAMED: LazyLock<HashSet<String>> = LazyLock::new(|| {
    const LINKING: &[&str] = &["as", "by", "be", "de", "for", "la", "là", "to", "go", "et"];
    lexicon::phrases(Class::Naming)
        .filter(|(_, spaced)| *spaced)
        .flat_map(|(phrase, _)| words_of(phrase))
        .filter(|w| w.chars().count() <= 5 && !LINKING.contains(&w.as_str()))
        .collect()
});

/// Whether `word` is one a phrase of naming names ("meg", "mich", "me").
pub(super) fn is_named(word: &str) -> bool {
    NAMED.contains(word)
}

/// Whether `word` is a form of a verb of naming ("llamas" of "me llames",
/// "kaller" of "kall meg", "called" of "call me").
pub(super) fn names_someone(word: &str) -> bool {
    let stem: String = word.trim_start_matches("m'").chars().take(4).collect();
    stem.chars().count() == 4 && NAMING_STEMS.contains(&stem)
}

/// Every language's names of languages: the spaced languages' as a set of
/// word starts (and the longest in bytes), the others in the file's order.
struct Names {
    spaced: HashSet<&'static str>,
    longest: usize,
    unspaced: Vec<&'static str>,
}

static NAMES: LazyLock<Names> = LazyLock::new(|| {
    let mut names = Names {
        spaced: HashSet::new(),
        longest: 0,
        unspaced: Vec::new(),
    };
    for (name, _, spaced) in lexicon::language_names() {
        if spaced {
            names.spaced.insert(name);
            names.longest = names.longest.max(name.len());
        } else {
            names.unspaced.push(name);
        }
    }
    names
});

/// Whether `word` starts with the name of a language in a spaced language.
fn starts_with_a_name(word: &str) -> bool {
    let names = &*NAMES;
    word.char_indices()
        .map(|(i, c)| i + c.len_utf8())
        .take_while(|&end| end <= names.longest)
        .any(|end| names.spaced.contains(&word[..end]))
}

/// The name of a language in `body` ("inglese", "по-английски", "日本語"),
/// as written there.
pub(super) fn language_named(body: &str) -> Option<String> {
    if !body.is_ascii() {
        if let Some(name) = NAMES.unspaced.iter().find(|n| body.contains(**n)) {
            return Some((*name).to_string());
        }
    }
    let words = words_of(body);
    // A word, or its part after a hyphen ("по-русски": "in Russian").
    let found = words
        .iter()
        .flat_map(|w| std::iter::once(w.as_str()).chain(w.split('-').skip(1)))
        .find(|w| starts_with_a_name(w))?;
    // As written ("Deutsch", "español").
    let written = body
        .split(|c: char| !(c.is_alphanumeric() || c == '-'))
        .flat_map(|w| std::iter::once(w).chain(w.split('-').skip(1)))
        .find(|w| w.to_lowercase().replace("i\u{307}", "i") == found)
        .unwrap_or(found);
    Some(without_a_preposition(written).to_string())
}

/// A language's name without the preposition written onto it ("בעברית" is
/// "in Hebrew", "بالعربي" "in Arabic"): a record says "Wants answers in
/// עברית", not "in בעברית". The shortest start of at most three letters
/// whose rest is itself a name goes.
fn without_a_preposition(name: &str) -> &str {
    name.char_indices()
        .skip(1)
        .take(3)
        .map(|(at, _)| &name[at..])
        .find(|rest| NAMES.spaced.contains(rest.to_lowercase().as_str()))
        .unwrap_or(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A name with a preposition written onto it is kept without it.
    #[test]
    fn a_language_is_named_without_its_preposition() {
        assert_eq!(language_named("תענה לי בעברית").as_deref(), Some("עברית"));
        assert_eq!(
            language_named("أجبني دائما بالعربي").as_deref(),
            Some("العربي")
        );
        assert_eq!(
            language_named("antworte auf Deutsch").as_deref(),
            Some("Deutsch")
        );
        assert_eq!(
            language_named("responde en inglés").as_deref(),
            Some("inglés")
        );
    }

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
