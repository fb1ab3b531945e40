//! The rules' answer from memory: the best-matching records, and notes about
//! another thing of a kind.

use super::*;

/// Answer from the best-matching memory: the record that shares the most
/// words with the request, most authoritative first on ties; with none, the
/// record nearest in meaning (embeddings on).
pub fn respond(ctx: &ReplyContext<'_>) -> String {
    let from_memory = respond_from_memory(ctx);
    if ctx.skills.is_empty() {
        return from_memory;
    }
    // What memory says answers first (a question about the task is answered
    // by its facts); then the approved procedure for this kind of request.
    let mut out: Vec<String> = Vec::new();
    if !from_memory.starts_with(NOTHING_IN_MEMORY) {
        out.push(from_memory);
    }
    out.extend(
        ctx.skills
            .iter()
            .map(memory::skill::SkillRevision::procedure),
    );
    out.join("\n\n")
}

/// The answer when memory holds nothing on what is asked.
pub const NOTHING_IN_MEMORY: &str = "I don't have anything in memory about that yet.";

/// The rules' answer from memory, or `None` when memory holds nothing on the
/// message (a failed model then has nothing better to offer than an apology).
pub fn respond_if_known(ctx: &ReplyContext<'_>) -> Option<String> {
    let answer = respond(ctx);
    (!answer.starts_with(NOTHING_IN_MEMORY)).then_some(answer)
}

/// The records that answer a message best, as the rules read them: those
/// sharing the most words with it, else the nearest by meaning; at most 3.
pub fn best_matches(memory: &[Retrieved]) -> Vec<&Retrieved> {
    let best = memory
        .iter()
        .filter(|r| r.hits > 0)
        .max_by_key(|r| r.hits)
        .map(|r| r.hits)
        .unwrap_or(0);
    let nearest = memory
        .iter()
        .filter_map(|r| r.similarity)
        .max_by(f64::total_cmp);
    if best == 0 && nearest.is_none() {
        return Vec::new();
    }
    memory
        .iter()
        .filter(|r| {
            if best > 0 {
                r.hits == best
            } else {
                r.similarity == nearest
            }
        })
        .take(3)
        .collect()
}

/// Each word of `text` as the index reads it: its token, or `None` for a
/// stopword or noise (which separates no compound).
pub(super) fn token_sequence(text: &str) -> Vec<Option<String>> {
    text.split_whitespace()
        .map(|w| {
            // "la GPU", "die GPU", "het rooster": no kind of thing, as
            // English stopwords are none.
            if function_word(w) {
                return None;
            }
            memory::fulltext::first_token(w)
        })
        .collect()
}

/// Whether a note that shares one word with the message is about another
/// thing of that kind: both name it with a different word before it
/// ("monitor requests" asked, "Laptop requests go to #it-hardware" kept).
/// Such a note is a neighbour, not the answer. `asked` is the message's
/// [`token_sequence`], made once for every note a reply weighs.
pub(super) fn another_of_its_kind(asked: &[Option<String>], note: &str) -> bool {
    let words: Vec<&str> = note.split_whitespace().collect();
    let token = |w: &str| {
        if function_word(w) {
            None
        } else {
            memory::fulltext::first_token(w)
        }
    };
    // Only a word that can share is read (tokenising every word of every
    // note weighed was a tenth of a question turn's instructions).
    let openings: Vec<char> = asked
        .iter()
        .flatten()
        .filter_map(|t| t.chars().next())
        .collect();
    let mut in_note: Vec<(usize, String)> = Vec::new();
    for (i, w) in words.iter().enumerate() {
        if opening_of_token(w).is_some_and(|c| !openings.contains(&c)) {
            continue;
        }
        if let Some(t) = token(w).filter(|t| asked.iter().flatten().any(|a| a == t)) {
            in_note.push((i, t));
        }
    }
    let mut shared: Vec<&String> = asked
        .iter()
        .flatten()
        .filter(|t| in_note.iter().any(|(_, k)| k == *t))
        .collect();
    shared.dedup();
    let [word] = shared.as_slice() else {
        return false;
    };
    let before_asked = asked
        .windows(2)
        .find(|pair| pair[1].as_ref() == Some(*word))
        .and_then(|pair| pair[0].clone());
    // The word before its first use past the note's first word.
    let at = in_note
        .iter()
        .find(|(i, t)| *i > 0 && t == *word)
        .map(|(i, _)| *i);
    let before_kept = at.and_then(|i| token(words[i - 1]));
    match (before_asked, before_kept) {
        (Some(a), Some(b)) => a != b,
        // Asked as a kind of it ("night shifts"), kept naming another thing
        // by it ("your shift lead"): the note is about the lead. A word of
        // lower-case letters only: a number, a code or a name ("150 EUR",
        // "the Tafel food bank") is the thing itself.
        (Some(_), None) if at.is_some_and(|i| common_word(words[i])) => {
            let after_asked = asked
                .windows(2)
                .find(|pair| pair[0].as_ref() == Some(*word))
                .and_then(|pair| pair[1].clone());
            let after_kept = at.and_then(|i| words.get(i + 1)).and_then(|w| token(w));
            after_kept.is_some() && after_kept != after_asked
        }
        _ => false,
    }
}

/// Whether a word as written is lower-case letters only (a common noun,
/// not a number, code or name).
fn common_word(w: &str) -> bool {
    let letters = w.trim_matches(|c: char| !c.is_alphanumeric());
    !letters.is_empty()
        && letters
            .chars()
            .all(|c| c.is_alphabetic() && c.is_lowercase())
}

/// The character a word's first token starts with, when that is sure
/// without making the token: a word of ASCII letters, digits and joiners
/// (`_`, `-`, `.`) between marks is read whole or stemmed, and neither
/// changes its first letter but for case. `None` for any other word.
fn opening_of_token(w: &str) -> Option<char> {
    let t = w.trim_matches(|c: char| !c.is_alphanumeric());
    let plain = t
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    t.chars()
        .next()
        .filter(|_| plain)
        .map(|c| c.to_ascii_lowercase())
}

/// Whether `text` asks what the agent calls the speaker ("hva kaller du meg
/// igjen?", "¿cómo me llamas?", "私のことは何と呼んでくれる？"): a question
/// with the speaker's word and a verb of naming, in any language of the lexicon.
pub(super) fn asks_own_name(text: &str) -> bool {
    if !text.contains(QUESTION_MARKS) {
        return false;
    }
    // Languages written without spaces drop the pronoun ("何と呼んでくれる？").
    if words::holds_unspaced(Class::Naming, text) {
        return true;
    }
    let words = words_of(text);
    words.iter().any(|w| words::names_someone(w))
        && (first_person(text) || words.iter().any(|w| words::is_named(w)))
}

/// Whether a note shares a word with the message other than a short
/// lower-case one ("la", "es", "die": articles and prepositions of the
/// languages English stopwords do not cover), which matches any note.
/// `asked` is the message's [`content_tokens`], made once for every note a
/// reply weighs; the note is read only until a word is shared.
pub(super) fn shares_a_word(asked: &[String], note: &str) -> bool {
    note.split_whitespace()
        .filter(|w| !function_word(w))
        .any(|w| {
            memory::fulltext::query_tokens(w)
                .iter()
                .any(|t| asked.contains(t))
        })
}

/// Whether a word as written is short, lower case and holds a vowel: an
/// article or a preposition in most languages ("la", "die", "het"), not
/// an abbreviation typed in lower case ("vpn", "gpu").
fn function_word(w: &str) -> bool {
    let letters = w.trim_matches(|c: char| !c.is_alphanumeric());
    letters.chars().count() <= 3
        && letters
            .chars()
            .all(|c| c.is_alphabetic() && c.is_lowercase())
        && letters
            .chars()
            .any(|c| "aeiouyàáâãäåèéêëìíîïòóôõöùúûüœæø".contains(c))
}

/// Every token the index reads in `text`, its function words left out.
pub(super) fn content_tokens(text: &str) -> Vec<String> {
    text.split_whitespace()
        .filter(|w| !function_word(w))
        .flat_map(memory::fulltext::query_tokens)
        .collect()
}

pub(super) fn respond_from_memory(ctx: &ReplyContext<'_>) -> String {
    // The name the speaker asked to be called answers "what do you call
    // me?", whatever words the question shares with it.
    let name = asks_own_name(ctx.text)
        .then(|| {
            // Personal memory here is the speaker's own: no one else's is read.
            ctx.memory
                .iter()
                .find(|r| r.record.scope.is_personal() && r.record.subject == "name")
        })
        .flatten();
    let matches: Vec<&Retrieved> = best_matches(ctx.memory)
        .into_iter()
        .filter(|r| name.is_none_or(|n| n.record.id != r.record.id))
        .collect();
    let named = name.map(|n| memory::sanitize::sanitize(&n.record.content));
    if matches.is_empty() {
        return named.unwrap_or_else(|| NOTHING_IN_MEMORY.into());
    }
    let best = matches[0].hits;
    // A note is weighed against what it was found with (a follow-up's
    // previous line too).
    let asked = token_sequence(ctx.searched_with);
    let asked_words = content_tokens(ctx.searched_with);
    let matches: Vec<&Retrieved> = matches
        .into_iter()
        .filter(|r| {
            !(r.hits == 1 && another_of_its_kind(&asked, &r.record.content))
                && (r.hits == 0 || shares_a_word(&asked_words, &r.record.content))
        })
        .collect();
    if matches.is_empty() {
        return named.unwrap_or_else(|| NOTHING_IN_MEMORY.into());
    }
    let lines: Vec<String> = matches
        .into_iter()
        .map(|r| {
            let cite = !ctx.shared || !r.record.scope.is_personal();
            let text = memory::sanitize::sanitize(&r.record.content);
            if cite {
                format!("{text} (Memory reference: {})", r.record.id)
            } else {
                text
            }
        })
        .collect();
    let mut out = named
        .into_iter()
        .chain(lines)
        .collect::<Vec<_>>()
        .join("\n");
    for o in ctx.overridden {
        if ctx
            .memory
            .iter()
            .any(|r| r.record.id == o.policy && r.hits == best)
        {
            out.push_str(&format!(
                "\n(Organisation policy {} overrides agent note {}.)",
                o.policy, o.note
            ));
        }
    }
    out
}
