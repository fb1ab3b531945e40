//! Text helpers of the rules: prefixes, sentences and clauses, greetings, keys
//! made of words.

use super::*;

/// Case-insensitive ASCII prefix strip that keeps the remainder's case.
pub(super) fn strip_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| s[prefix.len()..].trim_start())
}

pub(super) fn strip_any<'a>(s: &'a str, prefixes: &[&str]) -> Option<&'a str> {
    prefixes.iter().find_map(|p| strip_ci(s, p))
}

/// Split `s` at the first of `seps` (ASCII, case-insensitive): (before, sep, after).
pub(super) fn split_ci<'a>(
    s: &'a str,
    seps: &[&'static str],
) -> Option<(&'a str, &'static str, &'a str)> {
    let lower = s.to_ascii_lowercase();
    seps.iter()
        .filter_map(|sep| lower.find(sep).map(|i| (i, *sep)))
        .min_by_key(|(i, _)| *i)
        .map(|(i, sep)| (s[..i].trim(), sep, s[i + sep.len()..].trim()))
}

/// Titles written with a period that does not end a sentence ("Dr. Rossi",
/// "Mme. Dubois"), lower case without the period, in the languages the rules know.
pub(super) const TITLES: &[&str] = &[
    "dr", "mr", "mrs", "ms", "prof", "st", "jr", "sr", "sra", "srta", "dra", "mme", "mlle", "hr",
    "fr", "frau", "dott", "sig", "ing", "mag",
];

/// Whether `current` (a sentence so far, its `.` just added) ends with a
/// title's abbreviation: the name that follows belongs to the same sentence.
pub(super) fn ends_with_title(current: &str) -> bool {
    let word = current
        .trim_end_matches('.')
        .rsplit(|c: char| !c.is_alphabetic())
        .next()
        .unwrap_or("");
    TITLES.contains(&word.to_lowercase().as_str())
}

/// What ends a question: Arabic, Persian and Urdu write "؟", Chinese and
/// Japanese a full-width "？". Greek writes ";" ([`ends_asking`]).
pub const QUESTION_MARKS: [char; 3] = ['?', '？', '؟'];

/// Whether a Greek letter is in `s`: there ";" is the question mark.
fn greek(s: &str) -> bool {
    s.chars()
        .any(|c| ('\u{370}'..='\u{3ff}').contains(&c) || ('\u{1f00}'..='\u{1fff}').contains(&c))
}

/// Whether `s` ends with a question mark: one of [`QUESTION_MARKS`], or
/// Greek's ";" in Greek ("Κάθε πότε ελέγχονται τα σχοινιά;").
pub fn ends_asking(s: &str) -> bool {
    let s = s.trim_end();
    s.ends_with(QUESTION_MARKS) || (s.ends_with([';', '\u{37e}']) && greek(s))
}

pub(super) fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut current = String::new();
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            current.push(c);
            // A full-width stop ends a sentence where it stands: Chinese and
            // Japanese put no space after it ("…もらえますか？大阪から…").
            let ends = matches!(c, '。' | '！' | '？')
                || ((matches!(c, '.' | '!' | '?' | '؟')
                    || (matches!(c, ';' | '\u{37e}') && greek(&current)))
                    && chars.peek().is_none_or(|n| n.is_whitespace())
                    && !(c == '.' && ends_with_title(&current)));
            if ends {
                let s = current.trim().to_string();
                if !s.is_empty() {
                    out.push(s);
                }
                current.clear();
            }
        }
        let s = current.trim().to_string();
        if !s.is_empty() {
            out.push(s);
        }
    }
    out
}

pub(super) fn clean(s: &str) -> String {
    s.trim()
        .trim_end_matches(['.', '!', ',', ';'])
        .trim()
        .to_string()
}

/// `s` with its first letter upper case.
pub fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// A subject key for "the <thing>": lower case, articles and possessives dropped.
pub(super) fn thing_key(thing: &str) -> String {
    let mut words: Vec<String> = thing
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric() && c != '_' && c != '-')
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect();
    while words.first().is_some_and(|w| {
        ["the", "our", "my", "your", "a", "an", "this", "that", "all"].contains(&w.as_str())
    }) {
        words.remove(0);
    }
    // "the weekly digest always uses …" is about the weekly digest.
    while words.last().is_some_and(|w| {
        ["always", "now", "still", "usually", "also", "only", "never"].contains(&w.as_str())
    }) {
        words.pop();
    }
    words.join(" ")
}

pub(super) fn key_terms(s: &str, n: usize) -> String {
    memory::terms::terms(s)
        .into_iter()
        .take(n)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Greetings and thanks that open a message: never memory themselves.
pub(super) const GREETINGS: &[&str] = &[
    "hi,",
    "hi!",
    "hi ",
    "hello,",
    "hello!",
    "hello ",
    "hey,",
    "hey!",
    "hey ",
    "thanks!",
    "thanks,",
    "thanks.",
    "thank you!",
    "thank you,",
    "thank you.",
    "good morning,",
    "good morning!",
    "good afternoon,",
    "morning all,",
    "morning,",
    "ok,",
    "ok so",
    "okay,",
];

/// A greeting-only clause ("Thanks!", "hello"): nothing to remember or answer.
pub(super) fn is_greeting(clause: &str) -> bool {
    let t = clause
        .trim()
        .trim_end_matches(['.', '!', ','])
        .to_lowercase();
    matches!(
        t.as_str(),
        "hi" | "hello"
            | "hey"
            | "thanks"
            | "thank you"
            | "thx"
            | "ok"
            | "okay"
            | "cool"
            | "great"
            | "good morning"
            | "morning"
            | "good afternoon"
            | "bye"
            | "cheers"
    )
}

/// `s` without an opening greeting ("Hi, I prefer …" → "I prefer …").
pub(super) fn without_greeting(s: &str) -> &str {
    let mut s = s.trim();
    while let Some(rest) = strip_any(s, GREETINGS) {
        if rest.len() == s.len() {
            break;
        }
        s = rest.trim_start_matches([',', '!', ' ']);
    }
    s
}

/// Where one sentence holds two statements: "I prefer short answers and I work from Lisbon".
pub(super) const CLAUSE_BREAKS: &[&str] = &["; ", ", and i ", " and i ", ", but ", " but i "];

/// The clauses of `text`: its sentences, split where one holds two
/// statements, without opening greetings. Questions keep their `?`.
pub fn clauses(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for sentence in sentences(text).iter().flat_map(|s| {
        let (said, asked) = said_then_asked(s);
        std::iter::once(said).chain(asked)
    }) {
        let mut rest = without_greeting(sentence).to_string();
        while let Some((before, sep, after)) = split_ci(&rest, CLAUSE_BREAKS) {
            if !before.is_empty() {
                out.push(before.to_string());
            }
            // " and I work …" keeps its "I".
            rest = if sep.trim_end().ends_with(" i") {
                format!("I {after}")
            } else {
                after.to_string()
            };
        }
        let rest = rest.trim();
        if rest.is_empty() || is_greeting(rest) {
            continue;
        }
        match out.last_mut() {
            // "Dock 7 is for cold-chain trucks only. Not even for 5 minutes.":
            // what only limits the statement before it is part of it.
            Some(last)
                if opens_with_a_limit(rest)
                    && words_of(rest).len() <= 6
                    && !ends_asking(rest)
                    && !ends_asking(last) =>
            {
                *last = continued(last, rest);
            }
            _ => out.push(rest.to_string()),
        }
    }
    out
}

/// `said` continued by `more` after a dash, as one sentence: "Dock 7 is
/// for cold-chain trucks only — not even for 5 minutes" ("I" keeps its capital).
pub fn continued(said: &str, more: &str) -> String {
    let more = more.trim_end_matches(['.', '!']);
    let mut chars = more.chars();
    let more = match chars.next() {
        Some(first) if !more.starts_with("I ") => {
            format!("{}{}", first.to_lowercase(), chars.as_str())
        }
        _ => more.to_string(),
    };
    format!("{} — {more}", said.trim_end_matches(['.', '!']))
}

/// Whether `s` opens with a limit ("not even for 5 minutes", "only on
/// Fridays", "außer montags"): it qualifies what was said before it and
/// has no subject of its own.
pub(super) fn opens_with_a_limit(s: &str) -> bool {
    const LIMITS: &[&str] = &[
        "not",
        "even",
        "only",
        "except",
        "unless",
        "nor",
        "nicht",
        "außer",
        "nur",
        "niet",
        "behalve",
        "alleen",
        "inte",
        "utom",
        "bara",
        "ni",
        "sauf",
        "même",
        "seulement",
        "excepto",
        "salvo",
        "solo",
        "sólo",
        "nemmeno",
        "neanche",
        "tranne",
        "nem",
        "exceto",
        "apenas",
    ];
    words_of(s)
        .first()
        .is_some_and(|w| LIMITS.contains(&w.as_str()))
}

/// A fact of the speaker's and a question joined by a dash ("I'm on the
/// facades team — where is the plotter?"): two clauses, the fact first. A
/// dash inside a question ("Is the plotter — the big one — free?") joins
/// what it joins.
fn said_then_asked(sentence: &str) -> (&str, Option<&str>) {
    const DASHES: &[&str] = &[" — ", " – ", " - "];
    if !ends_asking(sentence) {
        return (sentence, None);
    }
    let theirs = |said: &str| label(said).is_some_and(|c| c.channel == ItemChannel::Personal);
    match split_ci(sentence, DASHES) {
        Some((said, _, asked)) if !asked.is_empty() && theirs(said) => (said, Some(asked)),
        _ => (sentence, None),
    }
}

/// Whether a clause is said by the speaker of themselves ("I …", "my …",
/// "call me …", "responde-me …").
pub fn first_person(clause: &str) -> bool {
    // "我们", "私たち" are "we": the speaker's group, not the speaker.
    let unspaced = || clause.replace("我们", "").replace("私たち", "");
    (!clause.is_ascii() && words::holds_unspaced(Class::Speaker, &unspaced()))
        || clause
            .split_whitespace()
            // A host, an address or an identifier is one word, no pronoun:
            // the "io" of "returns.nordhaul.io" is not Italian "io".
            .filter(|token| !is_identifier(token))
            .flat_map(|token| {
                token.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’'))
            })
            .flat_map(|w| w.split('-'))
            .any(|w| {
                words::is_word_as_said(Class::Speaker, w)
                    && (w != "i" || lower_i_is_english(clause))
            })
}

/// Whether `clause` is said of its speaker as far as the words can tell: in
/// the first person ([`first_person`]), or, in a language that drops its
/// pronouns, with a verb of its own in the first person ("sono celiaca",
/// "soy alérgica a los frutos secos", "od lutego pracuję w magazynie"),
/// where the verb is also said of others (Italian "sono", "they are"),
/// naming no one else ("Per la cronaca: Marta e Luca sono in ferie"). "Dneska
/// ráno se narodilo žirafí mládě" (a giraffe was born this morning) drops its
/// pronoun too, and is no one's fact.
pub fn of_themselves(clause: &str) -> bool {
    first_person(clause)
        || (in_a_pro_drop_language(clause)
            && (words::holds(Class::Am, clause)
                || own_verb(clause)
                    .is_some_and(|verb| !SAID_OF_OTHERS.contains(&verb) || names_no_one(clause))))
}

/// Verbs of [`OWN_VERBS`] that are also said of others.
const SAID_OF_OTHERS: &[&str] = &["sono"];

/// The commonest verbs said of oneself — be, have, work, live — in the first
/// person, in the languages of the lexicon that drop their pronouns, beside
/// its `am` class ("jestem", "sou", "olen", "vagyok"), which leaves out what
/// another language writes alike: read only in a clause written in such a
/// language, so Spanish "soy" is not English "soy", nor Croatian "sam" a
/// name. Turkish says the person by an ending alone.
const OWN_VERBS: &[&[&str]] = &[
    &["soy", "estoy", "tengo", "trabajo", "vivo"],
    &["sono", "ho", "lavoro", "sto"],
    &["estou", "tenho", "trabalho", "moro"],
    &["mam", "pracuję", "pracuje", "mieszkam"],
    &["jsem", "mám", "pracuji", "pracuju", "bydlím", "bydlim"],
    &["sam", "imam", "radim", "živim", "zivim"],
    &["sunt", "lucrez", "locuiesc"],
    &["έχω", "εχω", "δουλεύω", "δουλευω", "μένω", "μενω"],
    &["asun", "työskentelen"],
    &["dolgozom", "lakom"],
];

/// Whether `clause` is written in a language of the lexicon that drops its
/// pronouns, as `context::written_in` guesses it (a short Italian clause
/// reads as Spanish: which of them does not matter).
pub(super) fn in_a_pro_drop_language(clause: &str) -> bool {
    crate::context::written_in(clause).is_some_and(|language| {
        prompts::lexicon::lexicons()
            .iter()
            .any(|l| l.code == language.code && l.pro_drop)
    })
}

/// The first of [`OWN_VERBS`] in `clause`.
fn own_verb(clause: &str) -> Option<&'static str> {
    clause.split(|c: char| !c.is_alphanumeric()).find_map(|w| {
        let w = w.to_lowercase();
        OWN_VERBS
            .iter()
            .flat_map(|verbs| verbs.iter())
            .copied()
            .find(|v| *v == w)
    })
}

/// Whether `clause` names no one: no capitalised word past a sentence's
/// first (a colon opens none: "Para que conste: Julián es diabético"), a
/// code in capitals aside ("EL 48213"). "È celiaca" of someone is said
/// with their name.
fn names_no_one(clause: &str) -> bool {
    clause.split(['.', '!', '?', '¿', '¡']).all(|sentence| {
        sentence.split_whitespace().skip(1).all(|w| {
            let w = w.trim_matches(|c: char| !c.is_alphanumeric());
            let capital = w.chars().next().is_some_and(char::is_uppercase);
            !capital || w.chars().all(|c| !c.is_lowercase())
        })
    })
}

/// Whether a lower-case "i" in `clause` is English "I" typed fast ("i
/// prefer short answers"), not the "in" or "and" of a language that writes
/// "i" for it ("Vi har lige fået kage i køkkenet", "kawa i herbata").
fn lower_i_is_english(clause: &str) -> bool {
    use whatlang::Lang;
    !whatlang::detect(clause).is_some_and(|info| {
        matches!(
            info.lang(),
            Lang::Dan
                | Lang::Nob
                | Lang::Swe
                | Lang::Pol
                | Lang::Hrv
                | Lang::Srp
                | Lang::Slv
                | Lang::Ces
                | Lang::Slk
                | Lang::Cat
                | Lang::Ita
                | Lang::Lit
                | Lang::Lav
        )
    })
}

/// Whether a token, its surrounding punctuation aside, joins letters or
/// digits with `.`, `_`, `@`, `/` or `:` ("returns.nordhaul.io",
/// "sales_2025", "ops@example.com"): an identifier, not words.
fn is_identifier(token: &str) -> bool {
    let t = token.trim_matches(|c: char| !c.is_alphanumeric());
    // Three characters at a time, without collecting them (every word of
    // every clause is asked).
    let mut chars = t.chars();
    let (Some(mut a), Some(mut b)) = (chars.next(), chars.next()) else {
        return false;
    };
    for c in chars {
        if a.is_alphanumeric() && matches!(b, '.' | '@' | '_' | '/' | ':') && c.is_alphanumeric() {
            return true;
        }
        (a, b) = (b, c);
    }
    false
}

/// Whether a clause asks or requests something (a question, "show me …",
/// "can you …"): it is answered, and never read for memory.
pub(super) fn is_request(clause: &str) -> bool {
    matches!(classify(clause), Some(c) if c.channel == ItemChannel::Task)
}

/// Whether `text` asks or requests anything: then it is answered, whatever
/// else it holds.
pub fn asks(text: &str) -> bool {
    clauses(text).iter().any(|c| is_request(c))
}
