//! Grounding an answer in memory: values the notes given do not hold are not
//! shown as theirs.

use super::*;
use std::collections::HashSet;

/// How [`grounded`] opens the line with a note's own text, in English (the
/// reply language's own is `prompts::answers`' "memory says"). A model's line
/// opening so, in any of those languages, is an imitation (copied from an
/// earlier reply it was shown), and [`scrub_answer`] drops it: only steward
/// says what memory says.
pub const MEMORY_SAYS: &str = "Memory says:";

/// Words of the message a record must hold before [`grounded`] shows it.
pub const GROUNDING_MIN_HITS: i64 = 2;

/// `answer` checked against the note the message is about: the one record of
/// `best` (the records that answer the message best) whose values (a word
/// holding a digit, `.`, `_` or `#`: a host, an amount, a table, a time; or a
/// day of the week) the answer shows none of. A small model paraphrases a
/// note ("a reviewer" for "a second reviewer … before 15:00"): the note
/// follows on a line opened by `memory_says` (the reply language's "Memory
/// says:"). Where the answer says something else instead — a value of its
/// own, another day, or a yes or no about a value the note does not hold
/// ("No, claims of 900 EUR need no approval" under "over 500 EUR need
/// approval") — it contradicts the note or judges it, and is not shown: the
/// note is, so a citation never sits under the wrong value. A value the `message` itself holds answers nothing ("What does
/// SEV2 mean?" answered "SEV2 means an outage" leaves out "within 15
/// minutes"). Two or more notes left out: which one the message is about is
/// unknown, and none is shown (a third, unrelated note helps nobody). In a
/// group thread personal records are never shown.
pub fn grounded(
    answer: String,
    read: &Reading<'_>,
    best: &[&Retrieved],
    shared: bool,
    memory_says: &str,
) -> String {
    grounded_given(answer, read, best, shared, memory_says, &[])
}

/// [`grounded`], where the turn also gave the model `given` texts: what an
/// external tool answered this turn (docs/tools.md). A value from one is
/// the tool's, as a tied note's is that note's: not the model's invention.
pub fn grounded_given(
    answer: String,
    read: &Reading<'_>,
    best: &[&Retrieved],
    shared: bool,
    memory_says: &str,
    given: &[String],
) -> String {
    let said = memory::grounding::content_words(&answer);
    let asked = read.asked();
    let value = |w: &String| is_value(w) && !asked.contains(w);
    let (said_days, asked_days) = (days_named(&said), days_named(asked));
    let left_out: Vec<&Retrieved> = best
        .iter()
        .copied()
        // One shared word ("Deploy reminders help me") is a neighbour, not the answer.
        .filter(|r| r.hits >= GROUNDING_MIN_HITS)
        .filter(|r| !(shared && r.record.scope.is_personal()))
        .filter(|r| {
            let words = read.words_of(r);
            let values: Vec<&String> = words.iter().filter(|w| value(w)).collect();
            // A day is a value in any language: a small model translating
            // "every Friday" into Portuguese wrote "todos os fins de semana".
            let days: Vec<Weekday> = days_named(&words)
                .into_iter()
                .filter(|d| !asked_days.contains(d))
                .collect();
            (!values.is_empty() && !values.iter().any(|v| said.contains(*v)))
                || (!days.is_empty() && !days.iter().any(|d| said_days.contains(d)))
        })
        .filter(|r| !answer.contains(sanitize(&r.record.content).as_str()))
        .collect();
    let [note] = left_out.as_slice() else {
        return answer;
    };
    let text = sanitize(&note.record.content);
    // An answer that is part of the note it left out says nothing the note
    // does not: the note alone, said once.
    let part = normalised(answer.trim().trim_end_matches('.'));
    if !part.is_empty() && normalised(&text).contains(&part) {
        return text;
    }
    let words = memory::grounding::content_words(&text);
    // A value from another note that answers the message as well (a tie) is
    // that note's answer, not the model's invention: the note follows it.
    let neighbours: Vec<String> = best
        .iter()
        .filter(|r| r.record.id != note.record.id)
        .flat_map(|r| read.words_of(r).into_owned())
        .chain(
            given
                .iter()
                .flat_map(|g| memory::grounding::content_words(g)),
        )
        .collect();
    let own_value = said
        .iter()
        .any(|w| value(w) && !words.contains(w) && !neighbours.contains(w));
    let note_days = days_named(&words);
    let other_day = said_days
        .iter()
        .any(|d| !asked_days.contains(d) && !note_days.contains(d));
    // A yes or no about a value the note does not hold ("900 EUR" under
    // "over 500 EUR") is the model's own comparison: a small one gets it
    // wrong, and the note says it plainly. A yes or no about the note's own
    // words ("Yes, deploys need a reviewer") stands, with the note under it.
    let about_another_value = asked.iter().any(|w| is_value(w) && !words.contains(w));
    let judged = about_another_value && prompts::answers::opens_with(&answer).is_some();
    if own_value || other_day || judged {
        return format!("{memory_says} {text}");
    }
    format!("{answer}\n{memory_says} {text}")
}

/// `answer` without the sentences that state a value (a host, a channel, an
/// amount, a time: see [`is_value`]) of a note `given` whole to the model
/// when the search for the `message` found no record at all (`found`: none
/// sharing a word with it, none near it in meaning): the message is about
/// none of them, and a small model that names the nearest note's channel
/// for a question no note covers ("Where does the coffee machine request
/// go?" answered "#facilities" from "Printer problems go to #facilities")
/// states an unrelated note as the answer. Empty when nothing else is left:
/// the rules answer then. A record the model's own `memory_search` returned
/// (`searched`) is evidence it looked up, and stays.
pub fn without_unrelated_values(
    answer: String,
    read: &Reading<'_>,
    found: &[Retrieved],
    searched: &[i64],
    given: &[Retrieved],
) -> String {
    if found.iter().any(Retrieved::found_by_search) {
        return answer;
    }
    // A search in the notes' words finds nothing for a message in another
    // language ("Até quanto posso gastar sem aprovação?" about an English
    // note): no evidence that it is about none of them.
    if written_apart(read.message(), given) {
        return answer;
    }
    let asked = read.asked();
    let noted: Vec<String> = given
        .iter()
        .filter(|r| !searched.contains(&r.record.id))
        .flat_map(|r| read.words_of(r).into_owned())
        .filter(|w| is_value(w) && !asked.contains(w))
        .collect();
    if noted.is_empty() {
        return answer;
    }
    let states_a_note = |sentence: &str| {
        memory::grounding::content_words(sentence)
            .iter()
            .any(|w| noted.contains(w))
    };
    without_sentences(&answer, states_a_note)
}

/// `answer` without the sentences `drop` holds, its lines kept apart and
/// the lines left empty dropped.
fn without_sentences(answer: &str, drop: impl Fn(&str) -> bool) -> String {
    let kept: Vec<String> = answer
        .lines()
        .map(|line| {
            sentences(line)
                .into_iter()
                .filter(|s| !drop(s))
                .map(str::trim)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|line| !line.trim().is_empty())
        .collect();
    kept.join("\n")
}

/// `answer` without the sentences that state a value nothing the model was
/// given holds: not the prompt (the policy, the notes and records, the
/// speaker's preferences), the conversation, the message or a tool's result
/// (`seen`). A small model invents them ("The maximum word count for an
/// op-ed is 1000 words", with no note on op-eds; "The print edition is
/// scheduled for 20:00", the note saying 19:00), and a value said beside a
/// citation reads as memory's. A number of three digits or more is compared
/// by its digits ("1200" is "1,200", "19h00" is "19:00"); a host, a channel
/// or a table by its whole leading part ("gpu-kestrel.lab" of
/// "gpu-kestrel.lab:8443"); a day of the week by the day it names in any
/// language ("sexta-feira" is "fredag"). Empty when nothing else is left:
/// the rules answer then.
pub fn without_invented_values(answer: String, seen: &[&str]) -> String {
    let words: HashSet<String> = seen
        .iter()
        .flat_map(|t| memory::grounding::content_words(t))
        .collect();
    let mut numbers: HashSet<String> = words.iter().map(|w| digits(w)).collect();
    numbers.extend(seen.iter().flat_map(|t| grouped_numbers(t)));
    let invented = |w: &String| match made_value(w) {
        Some(Made::Number(d)) => !numbers.contains(&d),
        Some(Made::Name) => !words.iter().any(|s| same_name(w, s)),
        None => false,
    };
    // A day of the week nothing given names, in any language: a small model
    // wrote "quarta-feira" for a note saying "fredag". Read only when the
    // answer names one (most name none).
    let names_a_day = !days_named(&memory::grounding::content_words(&answer)).is_empty();
    let days_given = if names_a_day {
        days_named(&words.iter().cloned().collect::<Vec<_>>())
    } else {
        Vec::new()
    };
    without_sentences(&answer, |s| {
        let said = memory::grounding::content_words(s);
        said.iter().any(&invented)
            || (names_a_day && days_named(&said).iter().any(|d| !days_given.contains(d)))
    })
}

/// `kept` — `answer` without the sentences [`without_invented_values`]
/// dropped — with the one note of `given` (not a person's) whose numbers
/// those sentences also stated, on a line opened by `memory_says`: "A ajuda
/// de custo … é de 45 EUR, e é paga em quarta-feira", for a note of 45 EUR
/// paid "om fredagen", lost the right amount with the made-up day; the note
/// says both. Left beside it only when what is left says more than the
/// message ("Olá!" alone goes). `kept` as it is when nothing was dropped,
/// or no one note stated those numbers.
pub fn with_the_note_of_the_dropped(
    answer: &str,
    kept: String,
    given: &[Retrieved],
    read: &Reading<'_>,
    memory_says: &str,
) -> String {
    if kept == answer {
        return kept;
    }
    let numbers = |text: &str| -> Vec<String> {
        memory::grounding::content_words(text)
            .iter()
            .map(|w| digits(w))
            .filter(|d| d.len() >= 2)
            .collect()
    };
    let left = numbers(&kept);
    let dropped: Vec<String> = numbers(answer)
        .into_iter()
        .filter(|d| !left.contains(d))
        .collect();
    let from: Vec<&Retrieved> = given
        .iter()
        .filter(|r| !r.record.scope.is_personal())
        .filter(|r| {
            let held = numbers(&r.record.content);
            dropped.iter().any(|d| held.contains(d))
        })
        .collect();
    let [note] = from[..] else {
        return kept;
    };
    let shown = format!("{memory_says} {}", sanitize(&note.record.content));
    let says_more = memory::scrub::fold_words(&kept)
        .iter()
        .any(|w| !read.folded().contains(w));
    if says_more {
        format!("{kept}\n\n{shown}")
    } else {
        shown
    }
}

/// What kind of made value a word is, if it is one.
enum Made {
    /// A number of three digits or more, by its digits.
    Number(String),
    /// A host, a channel, a table, a file: letters joined by `.`, `_` or `#`.
    Name,
}

fn made_value(word: &str) -> Option<Made> {
    let d = digits(word);
    if !d.is_empty() {
        return (d.len() >= 3).then_some(Made::Number(d));
    }
    let dotted = word.split('.').filter(|p| p.chars().count() >= 2).count() >= 2
        && !word.split('.').any(str::is_empty);
    let named = word.contains('_') || (word.starts_with('#') && word.chars().count() > 3);
    (dotted || named).then_some(Made::Name)
}

fn digits(word: &str) -> String {
    word.chars().filter(char::is_ascii_digit).collect()
}

/// Whether `said` names `kept`: the same, or one the other's whole leading
/// part up to a joiner.
fn same_name(said: &str, kept: &str) -> bool {
    let leads = |long: &str, short: &str| {
        long.strip_prefix(short)
            .and_then(|rest| rest.chars().next())
            .is_some_and(|c| ".:/-_@#".contains(c))
    };
    said == kept || leads(kept, said) || leads(said, kept)
}

/// The numbers of `text` written in groups ("1,200", "1.200", "1 200"), by
/// their digits.
fn grouped_numbers(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut run = String::new();
    let mut pending_separator = false;
    for c in text.chars() {
        if c.is_ascii_digit() {
            run.push(c);
            pending_separator = false;
        } else if !run.is_empty() && !pending_separator && ",. '\u{a0}".contains(c) {
            pending_separator = true;
        } else {
            if run.len() >= 3 {
                out.push(std::mem::take(&mut run));
            }
            run.clear();
            pending_separator = false;
        }
    }
    if run.len() >= 3 {
        out.push(run);
    }
    out
}
