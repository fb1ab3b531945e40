//! Scrubbing a model's answer: quoted notes, labels, recitals and repeats,
//! citations of notes not shown.

use super::*;

/// A model's answer as the person may see it. Receipts, "Remember this?"
/// questions and citations are the turn's to write, from what it committed
/// and showed: a model that imitates them (a small one copies the history's
/// "Written: … (id: 7)") would tell the person something untrue, so its
/// lines that look like a receipt or a question are removed, and so is a
/// citation of a record it was not shown (`found`; [`cite`] adds steward's
/// own when none is left). An answer of citations alone says nothing. Lines that only repeat
/// the context, the `message` or the `prompt`'s instructions go too. Empty:
/// nothing to show.
pub fn scrub_answer(
    answer: &str,
    read: &Reading<'_>,
    prompt: &Prompt,
    found: &[Retrieved],
) -> String {
    // A model's own citations are not believed (steward cites from what
    // the answer shows): only one of a record found for the message stays.
    let shown: Vec<i64> = found.iter().map(|r| r.record.id).collect();
    // Given every note, a small model may recite one beside the point: when
    // retrieval found what the message is about, a note it did not relate to
    // the message is off topic (the rules then answer if nothing is left).
    let off_topic: Vec<&str> = if found.iter().any(|r| r.hits >= GROUNDING_MIN_HITS) {
        prompt
            .standing
            .iter()
            .filter(|(id, _)| {
                !found
                    .iter()
                    .any(|r| r.record.id == *id && r.found_by_search())
            })
            .map(|(_, text)| text.as_str())
            .collect()
    } else {
        Vec::new()
    };
    let asked = normalised(read.message());
    let instructions = prompt.policy.normalised.as_str();
    let mut lines = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for line in answer.lines() {
        // A note the model was given, quoted whole as its answer: the note is
        // the answer (asked in another language than the notes, a small model
        // answers so; nothing else in the answer is read).
        if let Some((id, note)) = quoted_note(line, prompt, found, read.message()) {
            if !copied_first_unasked(id, note, prompt, read.message()) {
                lines.push(note.to_string());
            }
            continue;
        }
        // The turn's context repeated back (a line opening with a frame, real
        // or made up): data the person never asked for.
        let echo = CONTEXT_LINES.iter().any(|l| line.trim().starts_with(l));
        let line = &unframed(line);
        let line = without_label(line);
        let line = &said_once(line, &mut seen);
        let line = &without_recitals(line, &off_topic);
        let line = &without_asked_back(line, read);
        let t = line.trim();
        let lower = t.to_lowercase();
        if loops(t) {
            continue;
        }
        let receipt = lower.contains("written:") && lower.contains("(id:");
        let question = lower.starts_with("remember this?") || lower.contains("reply yes or no");
        let imitated = memory_says_lower().iter().any(|m| lower.starts_with(m));
        let said = normalised(t);
        let repeated = !asked.is_empty() && (said == asked || said_back(t, read));
        // A line of the instructions recited back (a small model does that).
        let recited = said.len() >= 20 && instructions.contains(said.as_str());
        if receipt || question || echo || repeated || recited || imitated {
            continue;
        }
        lines.push(without_unshown_citations(line, &shown));
    }
    let text = lines.join("\n").trim().to_string();
    let said = text.replace(CITATION, "");
    if said.chars().all(|c| !c.is_alphabetic()) {
        return String::new();
    }
    // Only the message's own words left ("Olá!" of "Olá! Comecei ontem …",
    // once a note beside the point went): nothing is said.
    if memory::scrub::fold_words(&said)
        .iter()
        .all(|w| read.folded().contains(w))
    {
        return String::new();
    }
    // The message asked back, where memory holds the answer (a small model
    // translated "I bought a monitor for 230 EUR. Who signs off expenses
    // over 500 EUR?" into the reply language and stopped): a reply ending
    // in a question with no value beyond the message's answers nothing, and
    // the rules answer.
    let asked_words = read.asked();
    let adds_a_value = memory::grounding::content_words(&said)
        .iter()
        .any(|w| is_value(w) && !asked_words.contains(w));
    let asks_back = crate::llm::offline::ends_asking(&said);
    if asks_back && !adds_a_value && found.iter().any(|r| r.hits >= GROUNDING_MIN_HITS) {
        return String::new();
    }
    text
}

/// The text of the one memory frame `line` is, when it quotes a note the
/// model was given word for word (`<<<memory:4 agent_notes: …>>>`; the reply
/// stops at the frame's close, `llm::openai`, so the close may be missing):
/// a standing note, or a record found for the message that is not personal.
/// A frame of a record not given, or with another text, is made up: `None`.
/// A word or two before the frame, no sentence of their own ("I <<<memory:1
/// …"), are the start of a quote: shown alone they would say nothing. So is
/// the message said back before it ("सुबह की एयरपोर्ट शटल कितने बजे निकलती है?
/// <<<memory:2 …").
pub(super) fn quoted_note<'a>(
    line: &'a str,
    prompt: &Prompt,
    found: &[Retrieved],
    message: &str,
) -> Option<(i64, &'a str)> {
    /// Words before a quoted frame that still open a quote.
    const LEAD_WORDS: usize = 2;
    let line = line.trim();
    let at = line.find("<<<memory:")?;
    let lead = &line[..at];
    let short =
        lead.split_whitespace().count() <= LEAD_WORDS && !lead.contains(['.', '!', '?', '。']);
    let said_back = !lead.trim().is_empty() && normalised(lead) == normalised(message);
    if !(short || said_back) {
        return None;
    }
    let frame = line[at..].strip_prefix("<<<memory:")?;
    let frame = frame.strip_suffix(">>>").unwrap_or(frame);
    let (id, rest) = frame.split_once(' ')?;
    let id: i64 = id.parse().ok()?;
    let (_, text) = rest.split_once(": ")?;
    let said = normalised(text);
    let given = prompt
        .standing
        .iter()
        .any(|(s, note)| *s == id && *note == said)
        || found.iter().any(|r| {
            r.record.id == id
                && !r.record.scope.is_personal()
                && normalised(&sanitize(&r.record.content)) == said
        });
    (given && !said.is_empty()).then_some((id, text.trim()))
}

/// Whether a quote of note `id` is the first of the notes the model was
/// shown and shares nothing with `message` (`beliefs::may_be_about`): what
/// a small model copies when it has no answer — Qwen2.5-Coder-1.5B quoted
/// the first note for questions on taxis, meals, shifts and a Wi-Fi code,
/// asked in other languages (docs/models.md, "Held out an eleventh time").
/// Not an answer: the rules answer from what the search found, or say they
/// know nothing. Given one note, the model had no other to pick: its copy stands.
fn copied_first_unasked(id: i64, note: &str, prompt: &Prompt, message: &str) -> bool {
    prompt.standing.len() > 1
        && prompt
            .standing
            .first()
            .is_some_and(|(first, _)| *first == id)
        && in_latin_letters(message) == in_latin_letters(note)
        && !crate::beliefs::may_be_about(message, note)
}

/// Whether most of `text`'s letters are Latin. A question in Japanese or
/// Ukrainian shares no word with a note in Latin letters whatever it asks
/// ("平日の朝ってスタジオBは使えますか？" of "Studio B is reserved …"): that it
/// shares none says nothing, and the model's pick stands.
fn in_latin_letters(text: &str) -> bool {
    let (latin, other) = text
        .chars()
        .filter(|c| c.is_alphabetic())
        .fold((0, 0), |(l, o), c| {
            // Latin-1 to Latin Extended-B, and Vietnamese's letters (Latin Extended Additional).
            let extended =
                ('\u{c0}'..='\u{24f}').contains(&c) || ('\u{1e00}'..='\u{1eff}').contains(&c);
            if c.is_ascii_alphabetic() || extended {
                (l + 1, o)
            } else {
                (l, o + 1)
            }
        });
    latin >= other
}

/// Whether `line` only says the message back: three words or more, nine
/// in ten of them the message's, and no value of its own ("Ob kateri uri je
/// jutranja kontrola žoln pred postajo?" for "Živjo! Ob kateri uri …?").
fn said_back(line: &str, read: &Reading<'_>) -> bool {
    let said = memory::scrub::fold_words(line);
    let own: Vec<&String> = said.iter().filter(|w| !read.folded().contains(w)).collect();
    said.len() >= 3 && own.len() * 10 <= said.len() && !own.iter().any(|w| is_value(w))
}

/// Each language's "memory says" in lower case, as [`scrub_answer`] compares
/// a line's opening with it.
pub(super) fn memory_says_lower() -> &'static [String] {
    static LOWER: OnceLock<Vec<String>> = OnceLock::new();
    LOWER.get_or_init(|| {
        prompts::answers::languages()
            .iter()
            .map(|l| l.memory_says.to_lowercase())
            .collect()
    })
}

/// `line` without an upper-case label a small model puts before its answer
/// ("SPEAKER'S REPLY: …", "ANSWER: …"), in the shape of the turn's context
/// lines: a person reads the answer.
pub(super) fn without_label(line: &str) -> &str {
    let Some((label, rest)) = line.trim_start().split_once(':') else {
        return line;
    };
    let is_label = label.len() >= 4
        && label.chars().any(|c| c.is_ascii_uppercase())
        && label
            .chars()
            .all(|c| c.is_ascii_uppercase() || c == ' ' || c == '\'' || c == '_');
    if is_label {
        rest.trim_start()
    } else {
        line
    }
}

/// `line` with each memory or skill frame a model copied into it replaced by
/// the frame's text, and any other `<<<…>>>` markup dropped: a person reads
/// the note, not its wrapping.
pub(super) fn unframed(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(open) = rest.find("<<<") {
        out.push_str(&rest[..open]);
        let inner = &rest[open + 3..];
        let Some(close) = inner.find(">>>") else {
            rest = "";
            break;
        };
        let frame = &inner[..close];
        if frame.starts_with("memory:") || frame.starts_with("skill:") {
            if let Some((_, text)) = frame.split_once(": ") {
                out.push_str(text.trim());
            }
        }
        rest = &inner[close + 3..];
    }
    out.push_str(rest);
    out
}

/// Whether `line` loops: a run of words said three times over, twelve words
/// or more in all ("من المهم أن أتذكر أن من المهم أن أتذكر أن …", written by
/// Qwen2.5-Coder-1.5B up to its token cap). Whatever it started to say, the
/// model lost its way: no part of it is an answer.
pub(super) fn loops(line: &str) -> bool {
    const COPIES: usize = 3;
    const LOOPED_WORDS: usize = 12;
    let words: Vec<String> = line.split_whitespace().map(str::to_lowercase).collect();
    (1..=words.len() / COPIES).any(|n| {
        (0..=words.len() - n * COPIES).any(|at| {
            let first = &words[at..at + n];
            let copies = 1 + words[at + n..]
                .chunks_exact(n)
                .take_while(|next| *next == first)
                .count();
            copies >= COPIES && copies * n >= LOOPED_WORDS
        })
    })
}

/// The sentences of `line` not said before in this answer (`seen`) and not
/// about "the speaker" (the prompt's word for the person, recited back by a
/// small model: "The speaker's role is user.", "The speaker wants to know how
/// long the response should be."); a looping model repeats both.
pub(super) fn said_once(line: &str, seen: &mut Vec<String>) -> String {
    let mut kept = Vec::new();
    for sentence in sentences(line) {
        let key = normalised(sentence);
        let lower = sentence.trim_start().to_lowercase();
        // "The speaker wants to know how long …": the message said back.
        let about_the_speaker = ["the speaker's ", "the speaker "]
            .iter()
            .any(|p| lower.starts_with(p));
        // Short pieces (a fence, a table cell, "Yes.") may well repeat.
        let repeated = key.len() >= REPEAT_MIN_CHARS && seen.contains(&key);
        if about_the_speaker || repeated {
            continue;
        }
        if key.len() >= REPEAT_MIN_CHARS {
            seen.push(key);
        }
        kept.push(sentence.trim());
    }
    let indent = &line[..line.len() - line.trim_start().len()];
    format!("{indent}{}", kept.join(" "))
}

/// `line` without its sentences that ask the message's question back
/// ("نعم، يمكنني الرد بالعربي. في أي يوم …؟" for "… في أي يوم …؟"): never an
/// answer. A line asked back whole is dropped as said back.
fn without_asked_back(line: &str, read: &Reading<'_>) -> String {
    let all = sentences(line);
    if all.len() < 2 {
        return line.to_string();
    }
    let asked_back = |s: &str| crate::llm::offline::ends_asking(s) && said_back(s, read);
    if all.iter().all(|s| asked_back(s)) {
        return line.to_string();
    }
    kept_sentences(line, |s| !asked_back(s))
}

/// `line` without the sentences that recite one of `notes` (normalised).
pub(super) fn without_recitals(line: &str, notes: &[&str]) -> String {
    if notes.is_empty() {
        return line.to_string();
    }
    kept_sentences(line, |sentence| {
        let key = normalised(sentence);
        key.len() < REPEAT_MIN_CHARS || !notes.iter().any(|n| n.contains(&key))
    })
}

/// `line`, its indent kept, with only the sentences `keep` keeps.
fn kept_sentences(line: &str, keep: impl Fn(&str) -> bool) -> String {
    let kept: Vec<&str> = sentences(line)
        .into_iter()
        .filter(|s| keep(s))
        .map(str::trim)
        .collect();
    let indent = &line[..line.len() - line.trim_start().len()];
    format!("{indent}{}", kept.join(" "))
}

/// Letters and digits a sentence needs before saying it again counts as a repeat.
pub(super) const REPEAT_MIN_CHARS: usize = 16;

/// How the turn's context lines open (see [`assemble`]); a small model
/// sometimes answers with them.
pub(super) const CONTEXT_LINES: &[&str] = &[
    "SPEAKER ROLE",
    "REPLY LANGUAGE:",
    "SPEAKER'S PREFERENCE",
    "PREVIOUS CONTEXT",
    "OVERRIDDEN:",
    super::prompt::NOTES_ON_THE_QUESTION,
    "NOTES (organisation policy",
    "CONTEXT (data",
    "MESSAGE:",
    "<<<",
];

/// `line` without "Memory reference: N" citations of records not in `shown`.
pub(super) fn without_unshown_citations(line: &str, shown: &[i64]) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find(CITATION) {
        let after = &rest[at + CITATION.len()..];
        let end = after
            .char_indices()
            .find(|(_, c)| !(c.is_ascii_digit() || matches!(c, ' ' | '#' | ',')))
            .map_or(after.len(), |(i, _)| i);
        let ids: Vec<i64> = after[..end]
            .split([' ', '#', ','])
            .filter_map(|d| d.parse().ok())
            .collect();
        if !ids.is_empty() && ids.iter().all(|id| shown.contains(id)) {
            out.push_str(&rest[..at + CITATION.len() + end]);
            rest = &after[end..];
        } else {
            out.push_str(rest[..at].trim_end_matches(['(', ' ', '"']));
            rest = after[end..].trim_start_matches(')');
        }
    }
    out.push_str(rest);
    out
}
