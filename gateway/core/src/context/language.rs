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

/// The days of the week `words` name, in any language of the answers table
/// ("sexta-feira", "Fridays", "viernes", "fredag" and "金曜日" all name
/// Friday): a word that is a day's name, or starts with one of
/// [`DAY_STEM_LETTERS`] letters or more ("fredagen"), the longest first.
pub(super) fn days_named(words: &[String]) -> Vec<Weekday> {
    let names = &*DAY_NAMES;
    words
        .iter()
        .filter_map(|w| {
            let worded = names.worded.iter().find(|(n, _, _, _)| {
                *w == *n || (n.chars().count() >= DAY_STEM_LETTERS && w.starts_with(n.as_str()))
            });
            match worded {
                Some((_, day, _, _)) => Some(*day),
                None => names
                    .unspaced
                    .iter()
                    .find(|(n, _, _)| w.contains(n.as_str()))
                    .map(|(_, day, _)| *day),
            }
        })
        .collect()
}

/// chrono's locale for a language of the answers table: where a day's name
/// comes from in that language.
fn locale_of(code: &str) -> Option<chrono::Locale> {
    use chrono::Locale as L;
    Some(match code {
        "en" => L::en_US,
        "de" => L::de_DE,
        "es" => L::es_ES,
        "fr" => L::fr_FR,
        "pt" => L::pt_PT,
        "it" => L::it_IT,
        "nl" => L::nl_NL,
        "ja" => L::ja_JP,
        "ru" => L::ru_RU,
        "pl" => L::pl_PL,
        "tr" => L::tr_TR,
        "sv" => L::sv_SE,
        "zh" => L::zh_CN,
        "da" => L::da_DK,
        "fi" => L::fi_FI,
        "el" => L::el_GR,
        "hi" => L::hi_IN,
        "cs" => L::cs_CZ,
        "uk" => L::uk_UA,
        "ko" => L::ko_KR,
        "ar" => L::ar_SA,
        "nb" => L::nb_NO,
        "hu" => L::hu_HU,
        "ro" => L::ro_RO,
        "id" => L::id_ID,
        "vi" => L::vi_VN,
        "he" => L::he_IL,
        "hr" => L::hr_HR,
        _ => return None,
    })
}

/// Each day's name in `code`'s language as chrono's locale writes it,
/// Monday first.
fn week_in(code: &str) -> Option<Vec<(Weekday, String)>> {
    let locale = locale_of(code)?;
    // 2024-01-01 was a Monday.
    let monday = chrono::NaiveDate::from_ymd_opt(2024, 1, 1)?;
    Some(
        monday
            .iter_days()
            .take(7)
            .map(|d| (d.weekday(), d.format_localized("%A", locale).to_string()))
            .collect(),
    )
}

/// Whether `c` is of a script written without spaces between words (Chinese
/// characters, Japanese kana).
fn is_unspaced_script(c: char) -> bool {
    matches!(c, '\u{3040}'..='\u{30FF}' | '\u{4E00}'..='\u{9FFF}')
}

/// Letters a name must have before a longer word starting with it names its
/// day too ("fredagen", "금요일에"): "kedd" is also the start of "kedves".
const DAY_STEM_LETTERS: usize = 5;

/// Every language's names of the days, lower case: one-word names matched
/// as words (or a word's start, [`DAY_STEM_LETTERS`] on), with the language
/// that says them; names in a script without spaces ("金曜日", "星期五")
/// anywhere in the text.
struct DayNames {
    /// The name, its day, its language, and whether the language writes it
    /// in lower case ("quinta": "na Quinta do Vale Escuro" is a name).
    worded: Vec<(String, Weekday, &'static str, bool)>,
    unspaced: Vec<(String, Weekday, &'static str)>,
}

static DAY_NAMES: LazyLock<DayNames> = LazyLock::new(|| {
    let mut names = DayNames {
        worded: Vec::new(),
        unspaced: Vec::new(),
    };
    for lang in prompts::answers::languages() {
        for (day, written) in week_in(lang.code).unwrap_or_default() {
            let name = written.to_lowercase();
            if name.chars().any(is_unspaced_script) {
                names.unspaced.push((name, day, lang.code));
            } else if !name.contains(' ') {
                let lower_case = written.chars().next().is_some_and(char::is_lowercase);
                names.worded.push((name, day, lang.code, lower_case));
            }
        }
    }
    // The longest name a word starts with names its day ("cumartesi", not "cuma").
    names
        .worded
        .sort_by_key(|(n, _, _, _)| std::cmp::Reverse(n.chars().count()));
    names
});

/// The days `text` names, each with where its name ends in `text` and the
/// language of the name, in order.
fn days_in(text: &str) -> Vec<(usize, Weekday, &'static str)> {
    let names = &*DAY_NAMES;
    let mut out: Vec<(usize, Weekday, &'static str)> = Vec::new();
    let mut at = 0;
    for word in text.split_inclusive(|c: char| {
        !(c.is_alphanumeric() || c == '-' || c == '\'' || c == 'ʼ' || c == '’')
    }) {
        let start = at;
        at += word.len();
        let bare = word.trim_end_matches(|c: char| !c.is_alphanumeric());
        let lower = bare.to_lowercase();
        let capitalised = bare.chars().next().is_some_and(char::is_uppercase);
        // A sentence's first word is capitalised whatever it is.
        let opens = text[..start]
            .trim_end()
            .chars()
            .next_back()
            .is_none_or(|c| matches!(c, '.' | '!' | '?' | ':' | '¿' | '¡'));
        let named = names.worded.iter().find(|(n, _, _, lower_case)| {
            let read = lower == *n
                || (n.chars().count() >= DAY_STEM_LETTERS && lower.starts_with(n.as_str()));
            read && !(*lower_case && capitalised && !opens)
        });
        if let Some((_, day, code, _)) = named {
            out.push((start + bare.len(), *day, code));
        }
    }
    // These scripts have no case: found in the text as written, so the
    // offsets are the text's own.
    for (name, day, code) in &names.unspaced {
        if let Some(found) = text.find(name.as_str()) {
            out.push((found + name.len(), *day, code));
        }
    }
    out.sort_by_key(|(end, _, _)| *end);
    out
}

/// `text` with each day it names in another language than `lang` followed by
/// that day's name in `lang` — "Playtest hver fredag (sexta-feira) kl.
/// 14:00" for a person answered in Portuguese — once a day, and not where
/// `text` already names it in `lang`: a note shown as it was written is read
/// by someone who asked in another language.
pub fn days_glossed(text: &str, lang: &prompts::answers::Language) -> String {
    let Some(week) = week_in(lang.code) else {
        return text.to_string();
    };
    let named = days_in(text);
    let mut glossed: Vec<Weekday> = named
        .iter()
        .filter(|(_, _, code)| *code == lang.code)
        .map(|(_, day, _)| *day)
        .collect();
    let mut out = String::with_capacity(text.len() + 16);
    let mut from = 0;
    for (end, day, code) in named {
        if code == lang.code || glossed.contains(&day) || end < from {
            continue;
        }
        let Some((_, name)) = week.iter().find(|(d, _)| *d == day) else {
            continue;
        };
        out.push_str(&text[from..end]);
        out.push_str(&format!(" ({name})"));
        from = end;
        glossed.push(day);
    }
    out.push_str(&text[from..]);
    out
}

/// `answer` with each note of `notes` it shows word for word glossed
/// ([`days_glossed`]): a note quoted as it was written, never the model's
/// own sentences, which it wrote in the language it chose.
pub fn notes_glossed(
    answer: String,
    notes: &[Retrieved],
    lang: &prompts::answers::Language,
) -> String {
    let mut out = answer;
    for note in notes {
        let text = sanitize(&note.record.content);
        let text = text.trim_end_matches('.');
        if text.is_empty() || !out.contains(text) {
            continue;
        }
        let glossed = days_glossed(text, lang);
        if glossed != text {
            out = out.replacen(text, &glossed, 1);
        }
    }
    out
}
