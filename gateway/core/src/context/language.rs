//! Language in the reply checks: messages written apart from the notes, the
//! days of the week named.

use super::*;
use std::collections::HashMap;

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

/// Cyrillic letters no language of the answers table writes (Kazakh's,
/// Tatar's, Mongolian's): whatlang knows none of those languages.
const UNTABLED_CYRILLIC: &str = "әғқңөұүһӊӈҗҙҫҡ";

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
    // A language the table lacks is none of its languages, not the nearest
    // one: a Zulu question is not Indonesian, a Kazakh one not Ukrainian.
    // A near neighbour of one of the table's (Serbian, Slovak, Bulgarian,
    // Catalan, Afrikaans…) is more often that one written short.
    const NEIGHBOURS: &[&str] = &[
        "srp", "slk", "slv", "bel", "bul", "mkd", "cat", "afr", "lat", "epo", "yid",
    ];
    let outside = whatlang::detect(text).is_some_and(|i| {
        let code = i.lang().code();
        i.is_reliable() && !NEIGHBOURS.contains(&code) && !CODES.iter().any(|(w, _)| *w == code)
    });
    let untabled = text
        .chars()
        .flat_map(char::to_lowercase)
        .any(|c| UNTABLED_CYRILLIC.contains(c));
    if outside || untabled {
        return None;
    }
    let found = DETECTOR.detect_lang(text)?;
    let code = CODES.iter().find(|(w, _)| *w == found.code())?.1;
    prompts::answers::language(code)
}

/// The days of the week `words` (lower case) name, in any language of the
/// answers table ("sexta-feira", "fridays", "viernes", "fredag" and "金曜日"
/// all name Friday).
pub(super) fn days_named(words: &[String]) -> Vec<Weekday> {
    words
        .iter()
        .filter_map(|w| DAY_NAMES.day_of(w).map(|(day, _)| day))
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
/// characters, Japanese kana): a sentence of it is one "word".
pub(crate) fn is_unspaced_script(c: char) -> bool {
    matches!(c, '\u{3040}'..='\u{30FF}' | '\u{4E00}'..='\u{9FFF}')
}

/// Letters a name must have before a longer word starting with it names its
/// day too ("fredagen", "금요일에"): "kedd" is also the start of "kedves".
const DAY_STEM_LETTERS: usize = 5;

/// Every language's names of the days, lower case, each with its day and
/// whether every language saying it writes it in lower case ("quinta": "na
/// Quinta do Vale Escuro" is a name). A name two languages share ("fredag")
/// is one entry: what a name says is its day, not its language.
struct DayNames {
    /// One-word names, matched as a word or a word's start.
    worded: HashMap<String, (Weekday, bool)>,
    /// The longest one-word name, in bytes: no longer start is looked up.
    longest: usize,
    /// Names in a script without spaces ("金曜日", "星期五"), matched anywhere.
    unspaced: Vec<(String, Weekday)>,
}

impl DayNames {
    /// The day a lower-case word names and its name there: the word itself,
    /// else its longest start of [`DAY_STEM_LETTERS`] letters or more that is
    /// a name ("cumartesi", not "cuma"); else a name written without spaces
    /// inside it.
    fn day_of<'w>(&self, word: &'w str) -> Option<(Weekday, &'w str)> {
        if let Some((day, _)) = self.worded.get(word) {
            return Some((*day, word));
        }
        let starts = word
            .char_indices()
            .map(|(i, c)| i + c.len_utf8())
            .take_while(|&end| end <= self.longest)
            .skip(DAY_STEM_LETTERS - 1);
        let worded = starts
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .find_map(|end| {
                self.worded
                    .get(&word[..end])
                    .map(|(d, _)| (*d, &word[..end]))
            });
        worded.or_else(|| {
            self.unspaced.iter().find_map(|(n, d)| {
                word.find(n.as_str())
                    .map(|at| (*d, &word[at..at + n.len()]))
            })
        })
    }

    /// Whether `name` is written in lower case by every language saying it.
    fn lower_case(&self, name: &str) -> bool {
        self.worded.get(name).is_some_and(|(_, lower)| *lower)
    }
}

static DAY_NAMES: LazyLock<DayNames> = LazyLock::new(|| {
    let mut names = DayNames {
        worded: HashMap::new(),
        longest: 0,
        unspaced: Vec::new(),
    };
    for lang in prompts::answers::languages() {
        for (day, written) in week_in(lang.code).unwrap_or_default() {
            let name = written.to_lowercase();
            if name.chars().any(is_unspaced_script) {
                names.unspaced.push((name, day));
            } else if !name.contains(' ') {
                let lower = written.chars().next().is_some_and(char::is_lowercase);
                names.longest = names.longest.max(name.len());
                let entry = names.worded.entry(name).or_insert((day, lower));
                entry.1 &= lower;
            }
        }
    }
    names
});

/// The days `text` names, each with where its name ends in `text` and the
/// name as read (lower case), in order.
fn days_in(text: &str) -> Vec<(usize, Weekday, String)> {
    let names = &*DAY_NAMES;
    let mut out = Vec::new();
    let mut at = 0;
    for word in text.split_inclusive(|c: char| {
        !(c.is_alphanumeric() || c == '-' || c == '\'' || c == 'ʼ' || c == '’')
    }) {
        let start = at;
        at += word.len();
        let bare = word.trim_end_matches(|c: char| !c.is_alphanumeric());
        if bare.chars().any(is_unspaced_script) {
            continue;
        }
        let lower = bare.to_lowercase();
        let Some((day, name)) = names.day_of(&lower) else {
            continue;
        };
        // A sentence's first word is capitalised whatever it is; inside one,
        // a capitalised word where the language writes days in lower case
        // is a name.
        let capitalised = bare.chars().next().is_some_and(char::is_uppercase);
        let opens = text[..start]
            .trim_end()
            .chars()
            .next_back()
            .is_none_or(|c| matches!(c, '.' | '!' | '?' | ':' | '¿' | '¡'));
        if capitalised && !opens && names.lower_case(name) {
            continue;
        }
        out.push((start + bare.len(), day, name.to_string()));
    }
    // These scripts have no case: found in the text as written, so the
    // offsets are the text's own.
    for (name, day) in &names.unspaced {
        if let Some(found) = text.find(name.as_str()) {
            out.push((found + name.len(), *day, name.clone()));
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
    // Said in `lang` already: the name read is `lang`'s own ("fredag" is
    // Danish, Norwegian and Swedish alike).
    let own = |day: Weekday, read: &str| {
        week.iter()
            .any(|(d, name)| *d == day && name.to_lowercase() == read)
    };
    let named = days_in(text);
    let mut glossed: Vec<Weekday> = named
        .iter()
        .filter(|(_, day, read)| own(*day, read))
        .map(|(_, day, _)| *day)
        .collect();
    let mut out = String::with_capacity(text.len() + 16);
    let mut from = 0;
    for (end, day, _) in named {
        if glossed.contains(&day) || end < from {
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
