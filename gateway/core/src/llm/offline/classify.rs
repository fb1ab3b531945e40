//! What the rules make of a message: its statements, each clause classified and
//! labelled as a candidate.

use super::*;

/// A personal item (said about the speaker).
pub(super) fn personal_item(kind: &str, subject: impl Into<String>, content: String) -> Candidate {
    item(ItemChannel::Personal, kind, subject.into(), content)
}

pub(super) fn item(
    channel: ItemChannel,
    kind: &str,
    subject: String,
    content: String,
) -> Candidate {
    Candidate {
        channel,
        kind: kind.into(),
        subject,
        content,
    }
}

/// The clauses of `text` that may carry something to remember: not
/// questions, requests or greetings. Empty: no extraction is needed.
pub fn statements(text: &str) -> Vec<String> {
    let dated: Vec<String> = sentences(text)
        .into_iter()
        .filter(|s| personal::dated_today(s))
        .collect();
    clauses(text)
        .into_iter()
        .filter(|c| !is_request(c) && !transient(c))
        .filter(|c| !dated.iter().any(|s| s.contains(c.as_str())))
        .collect()
}

/// What the rules make of one clause the speaker said, when they recognise
/// it: its channel, kind, subject and normalised text.
pub fn label(clause: &str) -> Option<Candidate> {
    classify(clause).filter(|c| c.channel != ItemChannel::Task)
}

/// Classify one sentence. `None` for chit-chat. A turn asks this of the
/// same clause several times (its statements, their labels, whether it
/// asks: steps 7b and 8), and the reading is pure: the last few sentences
/// read on this thread are remembered.
pub(super) fn classify(sentence: &str) -> Option<Candidate> {
    const KEPT: usize = 8;
    type Read = std::collections::VecDeque<(String, Option<Candidate>)>;
    thread_local! {
        static READ: std::cell::RefCell<Read> = const { std::cell::RefCell::new(Read::new()) };
    }
    let known = READ.with_borrow(|read| {
        read.iter()
            .find(|(s, _)| s == sentence)
            .map(|(_, c)| c.clone())
    });
    if let Some(known) = known {
        return known;
    }
    let read = classify_anew(sentence);
    READ.with_borrow_mut(|kept| {
        if kept.len() == KEPT {
            kept.pop_front();
        }
        kept.push_back((sentence.to_string(), read.clone()));
    });
    read
}

fn classify_anew(sentence: &str) -> Option<Candidate> {
    let question = ends_asking(sentence);
    let s = clean(sentence.trim_end().trim_end_matches(QUESTION_MARKS));
    if s.is_empty() || transient(&s) {
        return None;
    }
    // A rule framed for everyone ("Policy: …"), whoever says it: the write
    // policy decides who may keep it.
    // A question is asked, whatever frames it ("Question for the team: …?"),
    // unless it asks the agent to tell the rule ("Can you make sure everyone
    // knows that …?").
    let framed = match question {
        false => framed_rule(&s),
        true => asked_to_tell(&s),
    };
    if let Some(rule) = framed {
        // "Update for everyone: …" corrects the note on its subject.
        let head = s.strip_suffix(rule).unwrap_or_default();
        let kind = if says_changed(head, rule) {
            "correction"
        } else {
            "rule"
        };
        return operational(rule, Some(kind));
    }
    // Asked, not stated: "Could you always answer me in French?".
    if let Some(standing) = standing_request(&s, question) {
        return Some(standing);
    }
    // Asked of the agent, for how it answers the speaker, without a
    // standing word ("no emojis for me please", "Отвечай мне по-русски").
    if let Some(preference) = addressed_preference(&s, question) {
        return Some(preference);
    }
    // How long the replies should be, in any shape ("Mejor respuestas más
    // largas y detalladas, por favor"): the speaker's, whatever opens it.
    if let Some(preference) = length_preference(&s, question) {
        // Worded as the rules word a stated preference ("Prefers short answers").
        let worded = personal(&s).filter(|p| p.kind == "preference");
        return Some(worded.unwrap_or(preference));
    }
    if let Some(zone) = time_zone(&s) {
        return Some(zone);
    }
    if let Some(rest) = strip_any(&s, DIRECTIVES) {
        let rest = rest.trim_start_matches([',', ' ']);
        if serves_speaker(rest) {
            return personal(rest);
        }
        return operational(rest, Some("rule"));
    }
    let lower = s.to_ascii_lowercase();
    // "Please draft …" asks as "draft …" does.
    let bare = lower.strip_prefix("please ").unwrap_or(&lower);
    // Asking to be reminded or told what is kept, in any language of the
    // lexicon ("Przypomnij mi …", "Recuérdame …"): a request.
    let told = || {
        words::strip_opening(Class::Told, &s).is_some() || words::holds_unspaced(Class::Told, &s)
    };
    let task_verb = TASK_STARTS
        .iter()
        .any(|t| lower.starts_with(t) || bare.starts_with(t))
        || told();
    if question || (task_verb && !opens_with_a_subject(&lower)) {
        return Some(item(
            ItemChannel::Task,
            "task",
            String::new(),
            capitalise(&s),
        ));
    }
    // "daily report please" asks too, unless the rest is about the speaker
    // ("call me Bo, please" is theirs to keep).
    let rest = lower
        .strip_suffix(" please")
        .map(|r| r.trim_end_matches(','))
        .filter(|r| !r.trim().is_empty());
    if let Some(rest) = rest {
        if personal(rest).is_none() {
            return Some(item(
                ItemChannel::Task,
                "task",
                String::new(),
                capitalise(&s),
            ));
        }
    }
    // Personal first: "always use X" is operational, "please always answer briefly" is personal.
    if lower.starts_with("always use ") || lower.starts_with("use ") {
        return operational(&s, None).or_else(|| personal(&s));
    }
    let stated = without_preamble(&s);
    // A value said to have changed ("Small correction, the build server is
    // ci-runner-08 now", "Update for everyone: …") corrects the note on its
    // subject, whatever pattern keys it.
    let head = &s[..s.len() - stated.len()];
    let changed = says_changed(head, stated);
    // The thing changed, named in the heading only, stays with the new value.
    let named;
    let stated = match heading_subject(head, stated).filter(|_| changed) {
        Some(subject) => {
            named = format!("{subject}: {stated}");
            named.as_str()
        }
        None => stated,
    };
    personal(stated)
        // Said, not asked, and after what asks a task ("share the deck with me").
        .or_else(|| stated_preference(&s))
        .or_else(|| operational(stated, changed.then_some("correction")))
        // What they are, before a value in it reads as the team's note:
        // "jestem na stałe w strefie C3" is theirs, never a claimed rule.
        .or_else(|| said_of_self(stated))
        .or_else(|| valued_statement(stated))
        .or_else(|| standing_statement(stated))
}

/// Extract candidate items from a message.
pub fn extract(text: &str) -> Vec<Candidate> {
    joined(clauses(text).iter().filter_map(|s| classify(s)).collect())
}

/// The items of one message, a preference keyed by its words alone and the
/// next such one joined ("could you keep it short with me? long answers
/// lose me tbh"): a wish and its reason are one thing to remember, asked
/// once and kept as one record. After a reply language asked for, what
/// names the replies but no form of them is that wish's reason ("… em
/// inglês? A equipa nova não fala português e eu reencaminho-lhes as tuas
/// respostas"): the record names the language alone, so the reason goes.
pub fn joined(items: Vec<Candidate>) -> Vec<Candidate> {
    let by_words = |c: &Candidate| {
        c.channel == ItemChannel::Personal
            && c.kind == "preference"
            && (c.subject.starts_with("always:") || c.subject == REPLY_LENGTH_SUBJECT)
    };
    let reason_of_a_language = |last: &Candidate, item: &Candidate| {
        last.subject == ANSWER_IN_SUBJECT
            && item.subject.starts_with("always:")
            && !words::holds(Class::Form, &item.content)
    };
    let mut out: Vec<Candidate> = Vec::with_capacity(items.len());
    for item in items {
        match out.last_mut() {
            Some(last) if reason_of_a_language(last, &item) => {}
            Some(last) if by_words(last) && by_words(&item) => {
                last.content = continued(&last.content, &item.content);
            }
            _ => out.push(item),
        }
    }
    out
}
