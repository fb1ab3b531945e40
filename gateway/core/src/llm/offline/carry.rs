//! A correction's new value carried into the note it replaces: "De 21 dagen
//! lageren geldt niet meer, het wordt voortaan minimaal 28 dagen" replacing
//! "Minimaal 21 dagen lageren voordat er gebotteld wordt" is kept as
//! "Minimaal 28 dagen lageren voordat er gebotteld wordt". The note says the
//! new value once and nothing of the old, which lives in the revision; read
//! by values and the lexicon's `former` words, so in every language of it.

use super::words::{self, words_of};
use prompts::lexicon::Class;

/// What ends a clause: a mark a space follows (a value's own marks, "17:30",
/// "13,5", have none).
const CLAUSE_ENDS: &[&str] = &[", ", "; ", ". ", ": ", " — ", " – ", " - ", "! ", "? "];

/// A value of `text`: a word holding a digit, without the marks around it.
fn value_of(raw: &str) -> Option<&str> {
    let v = raw.trim_matches(|c: char| !c.is_alphanumeric());
    v.chars().any(|c| c.is_ascii_digit()).then_some(v)
}

/// A value's shape: its digits, letters and marks as classes, runs joined
/// ("17:30" and "05:30" are one shape, "21" and "17:30" two).
fn shape(value: &str) -> String {
    let mut out = String::new();
    for c in value.chars() {
        let k = if c.is_ascii_digit() {
            '9'
        } else if c.is_alphabetic() {
            'a'
        } else {
            c
        };
        if !out.ends_with(k) || !matches!(k, '9' | 'a') {
            out.push(k);
        }
    }
    out
}

/// One clause's values, each with the place of its first word among the
/// clause's words, and the places of its `former` words.
struct Clause<'a> {
    values: Vec<(&'a str, usize)>,
    former: Vec<usize>,
    /// A `former` phrase of a language written without spaces: no place.
    former_unspaced: bool,
}

fn clauses(text: &str) -> Vec<Clause<'_>> {
    spans(text)
        .into_iter()
        .map(|(from, to)| {
            let clause = &text[from..to];
            let mut words: Vec<String> = Vec::new();
            let mut values = Vec::new();
            for raw in clause.split_whitespace() {
                if let Some(v) = value_of(raw) {
                    values.push((v, words.len()));
                }
                words.extend(words_of(raw));
            }
            Clause {
                values,
                former: words::find_all(Class::Former, &words)
                    .into_iter()
                    .map(|(at, len)| at + len)
                    .collect(),
                former_unspaced: words::holds_unspaced(Class::Former, clause),
            }
        })
        .collect()
}

/// `old` with the one value `correction` says no longer holds replaced by the
/// one new value it gives, when both are plain: the old value stands once in
/// `old`, the new one is of its shape and not in `old`, and a `former` word
/// marks the old value — in its clause with the new value in another, or
/// within two words before it, or between it and the new value. `None`
/// otherwise: the correction is kept as said.
pub fn carried_into(old: &str, correction: &str) -> Option<String> {
    let in_old: Vec<&str> = old.split_whitespace().filter_map(value_of).collect();
    let clauses = clauses(correction);
    let mut kept = Vec::new();
    let mut new = Vec::new();
    for (i, c) in clauses.iter().enumerate() {
        for &(v, at) in &c.values {
            let list = if in_old.contains(&v) {
                &mut kept
            } else {
                &mut new
            };
            if !list.iter().any(|&(w, _, _)| w == v) {
                list.push((v, i, at));
            }
        }
    }
    let [(was, was_in, was_at)] = kept[..] else {
        return kept
            .is_empty()
            .then(|| carried_by_label(old, correction))
            .flatten();
    };
    let mut same_shape = new.iter().filter(|(v, _, _)| shape(v) == shape(was));
    let (now, now_in, now_at) = *same_shape.next()?;
    if same_shape.next().is_some() || in_old.iter().filter(|&&v| v == was).count() != 1 {
        return None;
    }
    let clause = &clauses[was_in];
    let marked = if now_in != was_in {
        clause.former_unspaced || !clause.former.is_empty()
    } else {
        // One clause: the word ending just before the old value, or one
        // between the two ("28 instead of 21", "21 niet meer maar 28").
        clause.former.iter().any(|&end| {
            (end <= was_at && was_at - end <= 2)
                || (was_at < now_at && end > was_at && end <= now_at)
        })
    };
    marked.then(|| replace_value(old, was, now))
}

/// Whether `correction` gives a new value of the shape of one `old` holds:
/// "Der Code … ist geändert, jetzt 9082" of "… Zahlencode 4471" — a value
/// `old` does not say, beside one of its shape that the correction does not.
pub fn gives_a_new_value_of(old: &str, correction: &str) -> bool {
    let in_old: Vec<&str> = old.split_whitespace().filter_map(value_of).collect();
    let said: Vec<&str> = correction.split_whitespace().filter_map(value_of).collect();
    said.iter().any(|new| {
        !in_old.contains(new)
            && in_old
                .iter()
                .any(|was| !said.contains(was) && shape(was) == shape(new))
    })
}

/// Words before a value read as what names it ("Zahlenschloss, Code 5521").
const LABEL_WORDS: usize = 6;

/// Words after a value read as what it counts ("150 MAD per person").
const COUNTED_WORDS: usize = 3;

/// A value's exact shape: each digit, letter and mark ("5521" and "8830" are
/// one, "3" another) — a change of a code keeps its digits.
fn exact_shape(value: &str) -> String {
    value
        .chars()
        .map(|c| match c {
            c if c.is_ascii_digit() => '9',
            c if c.is_alphabetic() => 'a',
            c => c,
        })
        .collect()
}

/// The words around the value `value` in `text`: at most [`LABEL_WORDS`]
/// before it (what names it) and [`COUNTED_WORDS`] after it (what it counts).
fn label_of<'t>(text: &'t str, value: &str) -> Option<(String, String)> {
    let words: Vec<&'t str> = text.split_whitespace().collect();
    let at = words.iter().position(|w| value_of(w) == Some(value))?;
    let after = (at + 1 + COUNTED_WORDS).min(words.len());
    Some((
        words[at.saturating_sub(LABEL_WORDS)..at].join(" "),
        words[at + 1..after].join(" "),
    ))
}

/// `old` with its one value of a new value's exact shape made the new one,
/// when the correction does not say the old value but names it as `old`
/// does: words of a topic shared around both ("Der Code ist jetzt 8830" of
/// "Das Lager hinter Halle 3 hat ein Zahlenschloss, Code 5521"; "the shuttle
/// is now 180 MAD per person" of "…; 150 MAD per person, driver Hassan, +212
/// 661 48 20 93"). Of several values of that shape, the one named most like
/// it, what it counts weighing more than what names it (a phone number's
/// groups follow "per person" too, but count nothing of it). `None` when
/// two are named alike, or the labels share nothing ("claims now need
/// approval within 3 days" names no amount).
fn carried_by_label(old: &str, correction: &str) -> Option<String> {
    let in_old: Vec<&str> = old.split_whitespace().filter_map(value_of).collect();
    let said: Vec<&str> = correction.split_whitespace().filter_map(value_of).collect();
    let [now] = said[..] else {
        return None;
    };
    let (names_now, counts_now) = label_of(correction, now)?;
    let shared = crate::beliefs::topic_words_shared;
    let mut named: Vec<(usize, &str)> = in_old
        .iter()
        .filter(|&&v| v != now && exact_shape(v) == exact_shape(now))
        .filter(|&&v| in_old.iter().filter(|&&w| w == v).count() == 1)
        .filter_map(|&was| {
            let (names, counts) = label_of(old, was)?;
            // The unit right after both ("80 NOK", "95 NOK") counts them alike,
            // a currency too, which names no topic.
            let unit = same_unit(&counts_now, &counts) as usize;
            let score = shared(&names_now, &names) + 2 * (unit + shared(&counts_now, &counts));
            (score >= 1).then_some((score, was))
        })
        .collect();
    named.sort_by_key(|&(score, _)| std::cmp::Reverse(score));
    match named[..] {
        [(_, was)] => Some(replace_value(old, was, now)),
        [(best, was), (next, _), ..] if best > next => Some(replace_value(old, was, now)),
        _ => None,
    }
}

/// Whether two values' counted words open with one unit, a word of letters
/// ("NOK per person" and "NOK per person,").
fn same_unit(counts: &str, other: &str) -> bool {
    let unit = |text: &str| {
        text.split_whitespace()
            .next()
            .map(|w| {
                w.trim_matches(|c: char| !c.is_alphanumeric())
                    .to_lowercase()
            })
            .filter(|w| {
                w.chars().any(char::is_alphabetic) && !w.chars().any(|c| c.is_ascii_digit())
            })
    };
    unit(counts).is_some_and(|u| Some(u) == unit(other))
}

/// The clauses of `text` with where each starts and ends.
fn spans(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut from = 0;
    loop {
        let rest = &text[from..];
        match CLAUSE_ENDS.iter().filter_map(|e| rest.find(e)).min() {
            Some(at) => {
                out.push((from, from + at));
                from += at + 1;
            }
            None => {
                out.push((from, text.len()));
                return out;
            }
        }
    }
}

/// Whether `text` has a `former` word at all: what [`no_longer_holds`]
/// needs before the speaker's records are read for it.
pub fn says_something_former(text: &str) -> bool {
    words::holds(Class::Former, text)
}

/// Whether `clause` has a `former` word and names one of `old`'s names (a
/// capitalised word past the clause's first) or values.
fn says_no_longer(clause: &str, old: &str) -> bool {
    let named_in_old = |word: &str| {
        old.split_whitespace()
            .any(|w| w.trim_matches(|c: char| !c.is_alphanumeric()) == word)
    };
    let marked = words::holds_unspaced(Class::Former, clause)
        || !words::find_all(Class::Former, &words_of(clause)).is_empty();
    marked
        && clause.split_whitespace().enumerate().any(|(i, raw)| {
            let w = raw.trim_matches(|c: char| !c.is_alphanumeric());
            let name = i > 0 && w.chars().next().is_some_and(char::is_uppercase);
            (name || value_of(raw).is_some()) && named_in_old(w)
        })
}

/// Whether `new` says that something `old` names no longer holds: a clause
/// of `new` with a `former` word names one of `old`'s names or values
/// ("fra i dag er jeg flytta til Lyngheia, er ikke på Havbris lenger" of
/// "Jeg er fast plassert på Havbris"). Then `new` is said on `old`'s
/// subject: a change of it.
pub fn no_longer_holds(new: &str, old: &str) -> bool {
    spans(new)
        .into_iter()
        .any(|(from, to)| says_no_longer(&new[from..to], old))
}

/// `new` as kept when it changes `old`: without a short heading ("Update:",
/// "Oppdatering:") and without the clauses saying what of `old` no longer
/// holds, which lives in the revision — or as said, when nothing else is left.
pub fn as_changed(new: &str, old: &str) -> String {
    let body = match new.split_once(": ") {
        Some((heading, rest)) if heading.split_whitespace().count() <= 2 => rest,
        _ => new,
    };
    let kept: Vec<&str> = spans(body)
        .into_iter()
        .map(|(from, to)| &body[from..to])
        .filter(|clause| !says_no_longer(clause, old))
        .map(|clause| clause.trim_start_matches([',', ';', ' ']).trim())
        .filter(|clause| !clause.is_empty())
        .collect();
    match kept.is_empty() {
        true => new.to_string(),
        false => super::capitalise(kept.join(", ").trim_end_matches(['.', ',', ';'])),
    }
}

/// Whether `item` is a lasting fact of the speaker's (not a preference,
/// which has its own subjects): what [`no_longer_holds`] may make a change.
pub fn is_a_fact_of_theirs(item: &memory::Candidate) -> bool {
    item.channel == memory::ItemChannel::Personal
        && (item.kind == "fact" || item.kind == memory::policy::IDENTITY_KIND)
}

/// `text` with the value `was` (a whole word, marks around it kept) made `now`.
fn replace_value(text: &str, was: &str, now: &str) -> String {
    let mut out = String::with_capacity(text.len() + now.len());
    let mut rest = text;
    while let Some(at) = rest.find(was) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + was.len()..].chars().next();
        let whole =
            !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric);
        out.push_str(&rest[..at]);
        out.push_str(if whole { now } else { was });
        rest = &rest[at + was.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::carried_into;

    #[test]
    fn a_corrections_new_value_replaces_the_old_in_the_note() {
        for (old, correction, kept) in [
            (
                "Contractor VPN access lasts 30 days.",
                "Contractor VPN access now lasts 14 days, not 30",
                "Contractor VPN access lasts 14 days.",
            ),
            (
                "Die Kantine hat werktags bis 05:30 offen.",
                "Korrektur: die Kantine ist jetzt bis 06:00 offen, nicht mehr nur bis 05:30",
                "Die Kantine hat werktags bis 06:00 offen.",
            ),
            (
                "La tienda cierra a las 17:30 de lunes a viernes.",
                "La tienda ya no cierra a las 17:30; desde mayo cierra a las 18:30.",
                "La tienda cierra a las 18:30 de lunes a viernes.",
            ),
            (
                "Kaarten kosten 12 euro per persoon.",
                "Kaarten kosten voortaan 15 euro in plaats van 12",
                "Kaarten kosten 15 euro per persoon.",
            ),
            (
                "Przepustki wydaje portiernia do 16:00.",
                "Przepustki wydajemy teraz do 17:00 zamiast do 16:00.",
                "Przepustki wydaje portiernia do 17:00.",
            ),
        ] {
            assert_eq!(
                carried_into(old, correction).as_deref(),
                Some(kept),
                "{correction}"
            );
        }
    }

    #[test]
    fn a_new_value_named_as_the_note_names_the_old_is_carried_into_it() {
        for (old, correction, kept) in [
            (
                "Das Lager hinter Halle 3 hat ein Zahlenschloss, Code 5521.",
                "Der Code ist jetzt 8830",
                Some("Das Lager hinter Halle 3 hat ein Zahlenschloss, Code 8830."),
            ),
            (
                "The side gate opens with PIN 2468 after 18:00.",
                "Update: side gate PIN is now 1357",
                Some("The side gate opens with PIN 1357 after 18:00."),
            ),
            // Named by what it counts, after it; the note's other values stay.
            (
                "Airport shuttle to RAK leaves the hostel daily at 05:30 and 14:00; 150 MAD per person, driver Hassan, +212 661 48 20 93.",
                "correction: the airport shuttle is now 180 MAD per person.",
                Some("Airport shuttle to RAK leaves the hostel daily at 05:30 and 14:00; 180 MAD per person, driver Hassan, +212 661 48 20 93."),
            ),
            (
                "Code du cadenas de la terrasse sur le toit : 3158. La terrasse ferme à 23:00, pas de musique après.",
                "correction : le code du cadenas de la terrasse est maintenant 7742 (l'ancien a circulé chez les clients).",
                Some("Code du cadenas de la terrasse sur le toit : 7742. La terrasse ferme à 23:00, pas de musique après."),
            ),
            (
                "The night ferry to Vardø leaves at 23:15 and 01:40; 80 NOK per person, skipper Ivar Moe, +47 915 22 310.",
                "correction : the night ferry is now 95 NOK per person.",
                Some("The night ferry to Vardø leaves at 23:15 and 01:40; 95 NOK per person, skipper Ivar Moe, +47 915 22 310."),
            ),
            // Another value's shape: no amount is named.
            (
                "Expense claims over 500 EUR need approval.",
                "Expense claims now need approval within 3 days",
                None,
            ),
            // Two values of its shape: which one changed is unsaid.
            (
                "Room 4120 is on floor 2; the lab is room 4310.",
                "The kitchen is now 4415",
                None,
            ),
        ] {
            assert_eq!(
                carried_into(old, correction).as_deref(),
                kept,
                "{correction}"
            );
        }
    }

    #[test]
    fn a_name_said_to_hold_no_longer_makes_a_change_of_what_named_it() {
        use super::no_longer_holds;
        let old = "Jeg er fast plassert på Havbris fra denne uka";
        assert!(no_longer_holds(
            "Oppdatering: fra i dag er jeg flytta til Lyngheia, er ikke på Havbris lenger.",
            old
        ));
        assert!(no_longer_holds(
            "I'm at Lyngheia now, not at Havbris anymore",
            "I work at Havbris"
        ));
        assert!(no_longer_holds(
            "Mi turno ya no empieza a las 06:30; ahora a las 07:15",
            "Mi turno empieza a las 06:30"
        ));
        // Named, but nothing says it no longer holds.
        assert!(!no_longer_holds("I drive to Havbris on Mondays", old));
        // Said to hold no longer, but of something else.
        assert!(!no_longer_holds("I'm not vegetarian anymore", old));
        assert_eq!(
            super::as_changed(
                "Oppdatering: fra i dag er jeg flytta til Lyngheia, er ikke på Havbris lenger.",
                old
            ),
            "Fra i dag er jeg flytta til Lyngheia"
        );
        assert_eq!(
            super::as_changed("Not at Havbris anymore.", old),
            "Not at Havbris anymore."
        );
    }

    #[test]
    fn a_value_kept_or_an_unclear_change_is_said_as_it_was() {
        for (old, correction) in [
            // The old value still holds; the new one is another thing.
            (
                "Tours take at most 18 visitors.",
                "Tours stay at 18 visitors, and from now on one guide per 9 visitors",
            ),
            // Nothing says which value no longer holds.
            (
                "Tours take at most 18 visitors.",
                "Update: tours take 18 visitors and 2 guides",
            ),
            // Two new values of the old one's shape: which one replaces it?
            (
                "Doors open at 08:00.",
                "Doors no longer open at 08:00: 08:30 on weekdays, 09:00 at weekends",
            ),
            // The old value twice in the note: which one changed?
            (
                "Shift A 06:00–14:00, shift B 14:00–22:00.",
                "Shift A no longer ends at 14:00, it ends at 15:00",
            ),
            // A new value of another shape.
            (
                "Deploys stop at 16:00.",
                "Deploys no longer stop at 16:00, they stop on day 3",
            ),
        ] {
            assert_eq!(carried_into(old, correction), None, "{correction}");
        }
    }
}
