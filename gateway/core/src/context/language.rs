//! Language in the reply checks: messages written apart from the notes, the
//! days of the week named.

use super::*;

/// Whether `message` is written in another language than the notes `given`
/// read as (`whatlang`). A short message is rarely detected reliably; one
/// with letters outside ASCII ("İzin talebimi hangi adrese göndermem
/// gerekiyor?") is taken at the detector's best guess, an ASCII one only
/// when reliable (short English questions are guessed as anything).
pub(super) fn written_apart(message: &str, given: &[Retrieved]) -> bool {
    let Some(asked) = whatlang::detect(message).filter(|i| accented(message) || i.is_reliable())
    else {
        return false;
    };
    let notes: String = given
        .iter()
        .map(|r| r.record.content.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    whatlang::detect(&notes).is_some_and(|noted| noted.lang() != asked.lang())
}

/// Whether `text` has letters outside ASCII: a language guessed from it is
/// rarely English, and more often right than one from plain ASCII.
fn accented(text: &str) -> bool {
    text.chars()
        .any(|c| c.is_alphabetic() && !c.is_ascii_alphabetic())
}

/// The language of the answers table `text` is written in, by `whatlang`
/// told to choose among the table's languages only: its best guess when
/// `text` has letters outside ASCII or a few words, none for a short ASCII
/// text (short English is guessed as anything).
pub fn written_in(text: &str) -> Option<&'static prompts::answers::Language> {
    /// whatlang's ISO 639-3 codes, and the table's. Serbian and Bosnian in
    /// Latin letters are guessed as Croatian ("hrv"); whatlang's "srp" is
    /// Serbian in Cyrillic, left out: allowed, it took short Russian ("да,
    /// запомни", "менеджер") from "rus".
    const CODES: &[(&str, &str)] = &[
        ("eng", "en"),
        ("deu", "de"),
        ("spa", "es"),
        ("fra", "fr"),
        ("por", "pt"),
        ("ita", "it"),
        ("nld", "nl"),
        ("jpn", "ja"),
        ("rus", "ru"),
        ("pol", "pl"),
        ("tur", "tr"),
        ("swe", "sv"),
        ("cmn", "zh"),
        ("dan", "da"),
        ("fin", "fi"),
        ("ell", "el"),
        ("hin", "hi"),
        ("ces", "cs"),
        ("ukr", "uk"),
        ("kor", "ko"),
        ("ara", "ar"),
        ("nob", "nb"),
        ("hun", "hu"),
        ("ron", "ro"),
        ("ind", "id"),
        ("vie", "vi"),
        ("heb", "he"),
        ("hrv", "hr"),
    ];
    /// Words enough for a guess among the table's languages.
    const FEW_WORDS: usize = 5;
    static DETECTOR: LazyLock<whatlang::Detector> = LazyLock::new(|| {
        let table = CODES
            .iter()
            .filter_map(|(w, _)| whatlang::Lang::from_code(*w))
            .collect();
        whatlang::Detector::with_allowlist(table)
    });
    if !accented(text) && text.split_whitespace().count() < FEW_WORDS {
        return None;
    }
    let found = DETECTOR.detect_lang(text)?;
    let code = CODES.iter().find(|(w, _)| *w == found.code())?.1;
    prompts::answers::language(code)
}

/// The days of the week `words` name, in English, Portuguese, Spanish,
/// French, German, Italian or Dutch ("sexta-feira", "Fridays" and "viernes"
/// all name Friday).
pub(super) fn days_named(words: &[String]) -> Vec<Weekday> {
    /// Each name with the day it names and its place in the table (the
    /// first name a word starts with names its day), and the longest name.
    struct Names {
        days: HashMap<String, (usize, Weekday)>,
        longest: usize,
    }
    static NAMES: OnceLock<Names> = OnceLock::new();
    let names = NAMES.get_or_init(|| {
        use chrono::{Locale, NaiveDate};
        let locales = [
            Locale::en_US,
            Locale::pt_PT,
            Locale::pt_BR,
            Locale::es_ES,
            Locale::fr_FR,
            Locale::de_DE,
            Locale::it_IT,
            Locale::nl_NL,
        ];
        // 2024-01-01 was a Monday: a week of dates gives each day's name.
        let week = NaiveDate::from_ymd_opt(2024, 1, 1)
            .into_iter()
            .flat_map(|monday| monday.iter_days().take(7));
        let mut days = HashMap::new();
        for (at, day, name) in week
            .flat_map(|day| {
                locales.iter().map(move |l| {
                    let name = day.format_localized("%A", *l).to_string().to_lowercase();
                    // "segunda-feira" is said "segunda" too.
                    let short = name.split('-').next().unwrap_or_default().to_string();
                    (day.weekday(), short)
                })
            })
            .enumerate()
            .map(|(at, (day, name))| (at, day, name))
        {
            days.entry(name).or_insert((at, day));
        }
        let longest = days.keys().map(String::len).max().unwrap_or(0);
        Names { days, longest }
    });
    // Each word's starts looked up, not every name compared with each word.
    words
        .iter()
        .filter_map(|w| {
            w.char_indices()
                .map(|(i, c)| i + c.len_utf8())
                .take_while(|&end| end <= names.longest)
                .filter_map(|end| names.days.get(&w[..end]))
                .min_by_key(|(at, _)| *at)
        })
        .map(|(_, d)| *d)
        .collect()
}
