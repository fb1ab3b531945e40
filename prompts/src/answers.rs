//! Yes and no to "Remember this?" in the person's language
//! (`texts/answers.txt`): one table of languages, each with its yes and no
//! answers, its courtesy words, and what steward answers in it.

use foldhash::HashSet;
use std::sync::LazyLock;

/// One language of the table.
#[derive(Debug, PartialEq, Eq)]
pub struct Language {
    /// Its code in the table (`en`, `de`, …).
    pub code: &'static str,
    yes: Vec<Vec<String>>,
    no: Vec<Vec<String>>,
    courtesy: Vec<String>,
    receipt: &'static str,
    /// "Okay, I won't remember that." in this language.
    pub declined: &'static str,
    /// "There is nothing waiting for a yes or no." in this language.
    pub nothing_waiting: &'static str,
    /// What a reply-language preference may call it, lower case.
    names: Vec<String>,
    /// "Memory says:" in this language.
    pub memory_says: &'static str,
    /// Keep both: the new record beside the one it conflicts with.
    both: Vec<Vec<String>>,
    /// Word starts of the verbs of keeping ("save", "merk", "lưu").
    keep: Vec<String>,
}

impl Language {
    /// The receipt of a kept record in this language: `place` is where it
    /// went ("personal memory", "agent_notes"), `id` its record.
    pub fn receipt(&self, place: &str, id: i64) -> String {
        self.receipt
            .replace("{place}", place)
            .replace("{id}", &id.to_string())
    }

    /// What `words` answer in this language.
    fn read(&self, words: &[String]) -> Option<Choice> {
        [
            (Choice::Both, &self.both),
            (Choice::Yes, &self.yes),
            (Choice::No, &self.no),
        ]
        .into_iter()
        .find(|(_, answers)| self.answers_with(answers, words))
        .map(|(choice, _)| choice)
    }

    /// `words` open with one of `answers`, and what follows is courtesy or
    /// more of the same answers ("ja, sehr gerne", "no, gracias").
    fn answers_with(&self, answers: &[Vec<String>], words: &[String]) -> bool {
        answers.iter().any(|answer| {
            words.starts_with(answer)
                && words[answer.len()..].iter().all(|w| {
                    self.courtesy.contains(w) || answers.iter().any(|a| a.len() == 1 && &a[0] == w)
                })
        })
    }
}

/// An answer to "Remember this?".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// Keep it (replacing what it conflicts with).
    Yes,
    /// Keep nothing new.
    No,
    /// Keep it beside what it conflicts with.
    Both,
}

/// A yes, a no or a "both", and the language it was said in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct YesNo {
    /// Whether the new record is kept (a yes or a "both").
    pub yes: bool,
    pub choice: Choice,
    pub language: &'static Language,
}

impl YesNo {
    fn of(choice: Choice, language: &'static Language) -> YesNo {
        YesNo {
            yes: choice != Choice::No,
            choice,
            language,
        }
    }
}

/// The words of a reply as the table compares them: lower case, punctuation
/// (`¡!¿?.,、。`…) as spaces, the typographic apostrophe as `'`.
fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .replace('’', "'")
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '\'' {
                c
            } else {
                ' '
            }
        })
        .collect::<String>()
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

fn phrases(field: &str) -> Vec<Vec<String>> {
    field
        .split(',')
        .map(words)
        .filter(|w| !w.is_empty())
        .collect()
}

fn parse(text: &'static str) -> Vec<Language> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|line| {
            let f: Vec<&'static str> = line.split(" | ").map(str::trim).collect();
            let [code, yes, no, courtesy, receipt, declined, nothing_waiting, names, memory_says, both, keep] =
                f[..]
            else {
                return None;
            };
            Some(Language {
                code,
                yes: phrases(yes),
                no: phrases(no),
                courtesy: phrases(courtesy).into_iter().flatten().collect(),
                receipt,
                declined,
                nothing_waiting,
                names: names.split(',').map(|n| n.trim().to_lowercase()).collect(),
                memory_says,
                both: phrases(both),
                keep: keep.split(',').map(|k| k.trim().to_lowercase()).collect(),
            })
        })
        .collect()
}

static LANGUAGES: LazyLock<Vec<Language>> = LazyLock::new(|| parse(crate::answers_text().text));

/// The first word of every answer in every language: an answer opens with
/// one, so a message that does not is read no further (most messages).
static FIRST_WORDS: LazyLock<HashSet<&'static str>> = LazyLock::new(|| {
    LANGUAGES
        .iter()
        .flat_map(|l| l.yes.iter().chain(&l.no).chain(&l.both))
        .filter_map(|answer| answer.first().map(String::as_str))
        .collect()
});

/// Whether `text` opens with a word an answer opens with. What [`read`]
/// reads of it (the whole, or a head cut at a stop or a space) opens with
/// the same word, and an answer's words open with one of its phrases.
fn may_answer(text: &str) -> bool {
    words(text)
        .first()
        .is_some_and(|w| FIRST_WORDS.contains(w.as_str()))
}

/// Every language of the table, in its order (English first).
pub fn languages() -> &'static [Language] {
    &LANGUAGES
}

/// The table's English, the language of a button's answer.
pub fn english() -> &'static Language {
    language("en").unwrap_or(&LANGUAGES[0])
}

/// The language of the table with `code`.
pub fn language(code: &str) -> Option<&'static Language> {
    LANGUAGES.iter().find(|l| l.code == code)
}

/// The language a reply-language preference names ("Portuguese", "português").
pub fn named(name: &str) -> Option<&'static Language> {
    let name = name.trim().to_lowercase();
    LANGUAGES
        .iter()
        .find(|l| l.names.contains(&name))
        .or_else(|| {
            // What another language calls it ("inglese", "английский").
            let (_, code, _) =
                crate::lexicon::language_names().find(|(n, _, _)| name.starts_with(n))?;
            language(code)
        })
}

/// Whether `answer` opens with a yes or a no ("No, claims of 900 EUR …",
/// "Sí, …"): its first clause read as [`read`] reads a reply.
pub fn opens_with(answer: &str) -> Option<bool> {
    let first = answer
        .split([',', '.', '!', ';', ':', '—', '–', '、', '。', '，', '\n'])
        .next()?;
    read(first).map(|a| a.yes)
}

/// How much of a message past its answer may go along with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// At most two words ("yes, do", "nee joh"): read whether or not a
    /// question is waiting.
    Short,
    /// Also a yes and up to four plain words ("oui, mets à jour", "yes,
    /// replace the old time"): read only when a question is waiting, for
    /// with none, "yes, use the other table" corrects an answer.
    Waiting,
}

/// [`read`] as far as `reach`, in `preferred` first when it reads `text`:
/// "ja" from a person who asked for Dutch is Dutch, not the table's first
/// reader of "ja".
pub fn read_preferring(
    text: &str,
    preferred: Option<&'static Language>,
    reach: Reach,
) -> Option<YesNo> {
    if !may_answer(text) {
        return None;
    }
    let answer = answer_of(text, reach);
    let words = words(answer);
    preferred
        .and_then(|language| language.read(&words).map(|c| YesNo::of(c, language)))
        .or_else(|| read_as_far_as(text, reach))
}

/// What answers in `text`: the whole of it, or — when it opens with an
/// answer, ended by a comma or a stop or by its first word — that answer, if
/// a tail follows that goes along with it as far as `reach` ([`goes_along`]:
/// "yes, do", "ja, passt so", "да, запомни"; waiting, "oui, mets à jour").
/// A tail that may ask something else ("no, answer me in German") does not:
/// then the whole text is read, and reads as no answer.
fn answer_of(text: &str, reach: Reach) -> &str {
    let reads = |words: &[String]| LANGUAGES.iter().any(|l| l.read(words).is_some());
    // The answer's words, each read alone: a tail may not answer the other
    // way ("yes and no").
    let says = |words: &[String], yes: bool| {
        words.iter().any(|w| {
            LANGUAGES
                .iter()
                .filter_map(|l| l.read(std::slice::from_ref(w)))
                .any(|c| (c != Choice::No) == yes)
        })
    };
    let by_stop = text.split_once([',', '.', '!', ';', '—', '、', '，', '。']);
    let by_word = text.trim_start().split_once(char::is_whitespace);
    // The whole text read as an answer ("no thank you") is that answer.
    if reads(&words(text)) {
        return text;
    }
    let stopped = by_stop.map(|split| (split, true));
    for ((head, tail), stopped) in stopped.into_iter().chain(by_word.map(|w| (w, false))) {
        let head_words = words(head);
        let along = match (stopped && reach == Reach::Waiting, says(&head_words, true)) {
            (false, _) => Along::Short,
            (true, true) => Along::AfterYes,
            (true, false) => Along::AfterNo,
        };
        if goes_along(tail, along)
            && !head_words.is_empty()
            && reads(&head_words)
            && !(says(&head_words, true) && says(&words(tail), false))
            // A no's reason may hold a word that is a yes elsewhere
            // ("ні, … це я тільки сьогодні так хочу": "так" is "so" there).
            && !(says(&head_words, false)
                && says(&words(tail), true)
                && (along != Along::AfterNo || words(tail).len() <= 2))
        {
            return head;
        }
    }
    text
}

/// How far a tail after an answer may go along with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Along {
    /// At most two words without a number.
    Short,
    /// After a yes and a comma or a stop, with a question waiting: up to four
    /// words that name nothing.
    AfterYes,
    /// After a no and a comma or a stop, with a question waiting: any words
    /// that ask nothing anew — a no with its reason ("nein, lass mal — das
    /// muss ich erst mit dem Vorstand klären") is a no.
    AfterNo,
}

/// Whether `tail`, after an answer, only goes along with it: at most two
/// words without a number, or — after a yes and a comma or a stop ("si el
/// informe es semanal" is no "sí"), with a question waiting — up to four
/// that name nothing: no number, no name (a capital past the first word),
/// no language, no "but", and no word of the speaker, of replying, naming,
/// standing, a reply's form or only now ("yes, replace the old time" goes
/// along; "yes, answer me briefly", "yes, call them Bo" and "ja, aber nur
/// für heute" ask anew) — up to six with a verb of keeping, which may speak
/// of the speaker ("có, lưu giúp mình nhé", "yes, please save this one for me"); after a no so stopped, as many words
/// as it takes, none a number or one that asks anew (a capital is a German
/// noun as often as a name, and a no keeps nothing whatever follows it).
fn goes_along(tail: &str, along: Along) -> bool {
    use crate::lexicon::{language_names, phrases, Class};
    /// "But" in the table's languages: what follows it qualifies the answer.
    const BUT: &[&str] = &[
        "but", "aber", "mais", "pero", "ma", "maar", "men", "ale", "но", "ama", "mas", "dar",
        "αλλά", "mutta",
    ];
    static ASKING: LazyLock<HashSet<&'static str>> = LazyLock::new(|| {
        [Class::Reply, Class::Naming, Class::Standing, Class::Form]
            .into_iter()
            .flat_map(phrases)
            .map(|(p, _)| p)
            .chain(language_names().map(|(n, _, _)| n))
            .chain(BUT.iter().copied())
            .filter(|p| !p.contains(' '))
            .collect()
    });
    let said = words(tail);
    if tail.chars().any(|c| c.is_ascii_digit()) {
        return false;
    }
    static SPEAKER: LazyLock<HashSet<&'static str>> = LazyLock::new(|| {
        phrases(Class::Speaker)
            .map(|(p, _)| p)
            .filter(|p| !p.contains(' '))
            .collect()
    });
    static ONLY_NOW: LazyLock<HashSet<&'static str>> = LazyLock::new(|| {
        phrases(Class::OnlyNow)
            .map(|(p, _)| p)
            .filter(|p| !p.contains(' '))
            .collect()
    });
    let asks = said.iter().any(|w| ASKING.contains(w.as_str()));
    // "ja, aber nur für heute" asks for a one-off beside a yes; "no, only
    // for today" is a no with its reason.
    let only_now = said.iter().any(|w| ONLY_NOW.contains(w.as_str()));
    // "yes, I'm vegan now" says something of the speaker beside its yes, and
    // "có, lưu giúp mình nhé" asks to keep it for the speaker; a no keeps
    // nothing, whoever its reason speaks of.
    let keeps = said.iter().any(|w| {
        LANGUAGES
            .iter()
            .flat_map(|l| &l.keep)
            .any(|k| w.starts_with(k.as_str()))
    });
    let of_the_speaker = !keeps && said.iter().any(|w| SPEAKER.contains(w.as_str()));
    let named = tail
        .split_whitespace()
        .skip(1)
        .any(|w| w.chars().next().is_some_and(char::is_uppercase));
    match along {
        Along::AfterNo => said.len() <= 2 || !asks,
        // "yes please, save this one for me": a verb of keeping says more.
        _ if said.len() > if keeps { 6 } else { 4 } => false,
        Along::AfterYes => said.len() <= 2 || !(named || asks || of_the_speaker || only_now),
        Along::Short => said.len() <= 2,
    }
}

/// `text` as a yes or a no to "Remember this?", in the first language of the
/// table that reads it; `None` for anything else.
pub fn read(text: &str) -> Option<YesNo> {
    read_as_far_as(text, Reach::Short)
}

/// [`read`], as far as `reach`.
pub fn read_as_far_as(text: &str, reach: Reach) -> Option<YesNo> {
    if !may_answer(text) {
        return None;
    }
    let words = words(answer_of(text, reach));
    if words.is_empty() {
        return None;
    }
    LANGUAGES
        .iter()
        .find_map(|language| language.read(&words).map(|c| YesNo::of(c, language)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An answer with a short word after it is that answer; a longer tail
    /// may ask something else. Phrased for this test.
    #[test]
    fn an_answer_with_a_short_tail_is_that_answer() {
        for (text, yes) in [
            ("yes, go ahead", true),
            ("ja, klingt gut", true),
            ("sí, guárdalo", true),
            ("nee, hoeft niet", false),
            ("нет, не нужно", false),
            ("ja hoor, graag", true),
            ("yes keep it", true),
            ("nee joh", false),
        ] {
            assert_eq!(read(text).map(|a| a.yes), Some(yes), "{text}");
        }
        // With a question waiting, a yes goes along with a longer plain tail.
        for text in [
            "oui, mets à jour",
            "yes, replace the old time",
            "sí, cambia la hora",
            // A verb of keeping beside the speaker. Phrased for this test.
            "yes, save that for me",
            "yes, please save this one for me",
            "tak, zapisz mi to",
            "ja, merk dir das bitte",
            "sim, guarda isso para mim",
        ] {
            assert_eq!(read(text), None, "{text}");
            let waiting = read_as_far_as(text, Reach::Waiting);
            assert_eq!(waiting.map(|a| a.yes), Some(true), "{text}");
        }
        // With a question waiting, a no stopped by a comma or a dash is a no,
        // whatever reason follows, unless the reason asks anew. Phrased for
        // this test.
        for text in [
            "no, leave refunds out",
            "nee — dat wil ik eerst met de directie bespreken",
            "nie, daj spokój, muszę to najpierw obgadać z szefem",
            "non, laisse tomber pour l'instant, je dois en parler au bureau",
            "ні, не треба, я так хочу лише сьогодні",
        ] {
            assert_eq!(read(text), None, "{text}");
            let waiting = read_as_far_as(text, Reach::Waiting);
            assert_eq!(waiting.map(|a| a.yes), Some(false), "{text}");
        }
        for text in [
            "no, answer me in Polish from now on",
            "nein, aber nur für heute",
            "no, it is 14 days",
            "yes, I am vegan now and save it",
            "yes, answer me briefly",
            "yes, call them Bo",
            "yes, but in Spanish",
            "ja, aber nur für heute",
            "yes, keep it for 2 weeks",
            "si el informe es semanal",
        ] {
            assert_eq!(read_as_far_as(text, Reach::Waiting), None, "{text}");
        }
        for text in [
            "no, answer me in German instead",
            "yes, 14 days",
            "yes and no",
            "yes, no",
            "no yes",
            "no, answer me in German",
        ] {
            assert_eq!(read(text), None, "{text}");
        }
    }

    fn answer(text: &str) -> Option<(bool, &'static str)> {
        read(text).map(|a| (a.yes, a.language.code))
    }

    #[test]
    fn a_word_two_languages_share_is_read_in_the_persons_own() {
        let dutch = named("Dutch");
        assert_eq!(read("ja").map(|a| a.language.code), Some("de"));
        assert_eq!(
            read_preferring("ja", dutch, Reach::Short).map(|a| a.language.code),
            Some("nl")
        );
        // A word the preferred language does not have is read as before.
        assert_eq!(
            read_preferring("oui", dutch, Reach::Short).map(|a| a.language.code),
            Some("fr")
        );
    }

    #[test]
    fn both_keeps_both_in_every_language() {
        for (said, code) in [
            ("both", "en"),
            ("Beide, bitte", "de"),
            ("los dos", "es"),
            ("両方", "ja"),
        ] {
            let a = read(said).unwrap_or_else(|| panic!("{said}"));
            assert_eq!(
                (a.choice, a.yes, a.language.code),
                (Choice::Both, true, code),
                "{said}"
            );
        }
        assert_eq!(read("yes").map(|a| a.choice), Some(Choice::Yes));
        assert_eq!(
            read("nein").map(|a| (a.choice, a.yes)),
            Some((Choice::No, false))
        );
    }

    #[test]
    fn every_line_of_the_table_has_every_field() {
        let lines = crate::answers_text()
            .text
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .count();
        assert_eq!(languages().len(), lines);
        assert!(languages().len() >= 8);
        for l in languages() {
            assert!(!l.yes.is_empty() && !l.no.is_empty(), "{}", l.code);
            assert!(
                l.receipt("personal memory", 7).contains("(id: 7)"),
                "{}",
                l.code
            );
            assert!(
                !l.memory_says.is_empty()
                    && !l.names.is_empty()
                    && !l.both.is_empty()
                    && l.keep.iter().all(|k| !k.is_empty()),
                "{}",
                l.code
            );
            assert_eq!(named(&l.names[0]), Some(l), "{}", l.code);
        }
        assert_eq!(
            english().receipt("personal memory", 7),
            "Written: personal memory updated (id: 7)."
        );
    }

    /// The answers this table was written for (tuned on).
    #[test]
    fn a_romanised_russian_yes_or_no_is_read() {
        assert_eq!(
            read("da").map(|a| (a.yes, a.language.code)),
            Some((true, "ru"))
        );
        assert_eq!(read("Da!").map(|a| a.yes), Some(true));
        assert_eq!(
            read("net").map(|a| (a.yes, a.language.code)),
            Some((false, "ru"))
        );
    }

    #[test]
    fn yes_and_no_are_read_in_many_languages() {
        for (text, yes, code) in [
            ("yes", true, "en"),
            ("Yes please!", true, "en"),
            ("ja", true, "de"),
            ("Ja!", true, "de"),
            ("jawohl", true, "de"),
            ("ja bitte", true, "de"),
            ("sí", true, "es"),
            ("oui", true, "fr"),
            ("sim", true, "pt"),
            ("sì", true, "it"),
            ("はい", true, "ja"),
            ("да", true, "ru"),
            ("tak", true, "pl"),
            ("evet", true, "tr"),
            ("ja tack", true, "sv"),
            ("japp", true, "sv"),
            ("好的", true, "zh"),
            ("可以", true, "zh"),
            ("no", false, "en"),
            ("nein", false, "de"),
            ("non", false, "fr"),
            ("não", false, "pt"),
            ("いいえ", false, "ja"),
            ("нет", false, "ru"),
            ("nie", false, "pl"),
            ("hayır", false, "tr"),
            ("HAYIR", false, "tr"),
            ("no gracias", false, "es"),
            ("nee", false, "nl"),
            ("nej", false, "sv"),
        ] {
            assert_eq!(answer(text), Some((yes, code)), "{text}");
        }
    }

    #[test]
    fn anything_else_is_no_answer() {
        for text in [
            "",
            "yes but use the other table",
            "no idea, what is the VPN host?",
            "ja, aber nur für heute",
            "Was ist der VPN-Host?",
            "si el informe es semanal",
            "nothing",
        ] {
            assert_eq!(answer(text), None, "{text}");
        }
    }

    /// Phrasings written before the table was tuned and never tuned on.
    #[test]
    fn held_out_yes_and_no() {
        for (text, yes) in [
            ("Ja, sehr gerne!", true),
            ("¡Sí, por favor!", true),
            ("Oui, volontiers.", true),
            ("Sim, claro", true),
            ("はい、お願いします。", true),
            ("Да, конечно", true),
            ("Tak!", true),
            ("Evet, lütfen", true),
            ("Sì, grazie!", true),
            ("Jawohl.", true),
            ("Nein, danke.", false),
            ("Non, merci", false),
            ("Não, obrigada", false),
            ("いいえ、結構です", false),
            ("Нет, спасибо", false),
            ("Nie, dziękuję", false),
            ("Hayır, teşekkürler", false),
            ("No, gracias", false),
        ] {
            assert_eq!(read(text).map(|a| a.yes), Some(yes), "{text}");
        }
    }
}
