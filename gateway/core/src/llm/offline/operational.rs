//! Operational statements: rules framed for everyone, corrections, changed
//! values, valued notes.

use super::*;

pub(super) const TASK_STARTS: &[&str] = &[
    "produce ",
    "make ",
    "create ",
    "generate ",
    "run ",
    "show ",
    "give ",
    "list ",
    "send ",
    "tell me",
    "find ",
    "get ",
    "build ",
    "prepare ",
    "write ",
    "fetch ",
    "check ",
    "summarise ",
    "summarize ",
    "draft ",
    "compile ",
    "can you",
    "could you",
    "would you",
    "will you",
    "please remind",
    "please help",
    "please tell",
    "remind me",
    "help me",
    "explain ",
    "translate ",
    "describe ",
    "look up ",
    "ignore ",
    "disregard ",
    "forget all",
    "forget everything",
    "forget your",
    "print ",
    "repeat ",
    "output ",
    "pretend ",
    "act as ",
    "what ",
    "what's ",
    "how ",
    "when ",
    "where ",
    "who ",
    "why ",
    "which ",
    "is ",
    "are ",
    "do ",
    "does ",
    "did ",
    "should ",
];

/// What follows a verb that acts on something ("print the …", "run it",
/// "make sure …"): after one, the opening word is a verb of a request.
const OBJECT_OPENINGS: &[&str] = &[
    "the", "a", "an", "me", "us", "it", "them", "this", "that", "these", "those", "my", "our",
    "your", "all", "some", "any", "every", "out", "up", "sure", "him", "her",
];

/// Whether a clause that opens like a request ("Print …", "Build …",
/// "Check-in …") states something of a thing named by its first words:
/// the word after the opening is no object of it, and "is"/"are" follows
/// within a few words, before any "if"/"when" ("Print deadline for the
/// Sunday edition is Saturday 19:00", "Build server is ci-runner-08").
pub(super) fn opens_with_a_subject(lower: &str) -> bool {
    let words = words_of(lower);
    // "What time is standup", "Is the build green": asked.
    const ASKING: &[&str] = &[
        "is", "are", "do", "does", "did", "should", "can", "could", "would", "will",
    ];
    if words.len() < 3
        || OBJECT_OPENINGS.contains(&words[1].as_str())
        || ASKS_WHETHER.contains(&words[0].as_str())
        || ASKING.contains(&words[0].as_str())
    {
        return false;
    }
    words
        .iter()
        .take(9)
        .skip(1)
        // "of" is an English preposition here ("Print deadline of the …"),
        // not Dutch "whether".
        .take_while(|w| *w == "of" || !ASKS_WHETHER.contains(&w.as_str()))
        .any(|w| ["is", "are", "was", "were"].contains(&w.as_str()))
}

/// Openings of a standing instruction: for everyone, unless what follows
/// asks how the speaker alone is served ("From now on, answer me in …").
pub(super) const DIRECTIVES: &[&str] = &[
    "from now on,",
    "from now on",
    "going forward,",
    "going forward",
    "make sure you ",
    "make sure to ",
    "be sure to ",
];

/// Framings that make what follows a rule for everyone, whatever it says
/// ("rule: …", "Policy: …", "Please remember for everyone: …", "Team rule —
/// …"): operational, and kept without the framing. Longest first.
pub(super) const RULE_FRAMINGS: &[&str] = &[
    "please remember for everyone",
    "please note for everyone",
    "remember for everyone",
    "note for everyone",
    "note to everyone",
    "note for the team",
    "reminder for everyone",
    "reminder to everyone",
    "reminder for the team",
    "for everyone:",
    "rule of thumb for everyone",
    "rule of thumb",
    "standing rule",
    "house rule",
    "team rule",
    "team policy",
    "new rule",
    "new policy",
    "rule:",
    "policy:",
    "regel:",
    "norma:",
    "règle :",
    "règle:",
    "regra:",
    "regola:",
];

/// What separates a framing from its rule ("Team rule — …", "rule: …").
pub(super) const FRAMING_ENDS: &[char] = &[':', '-', '—', '–', ',', ' '];

/// Whether `clause` is framed as a rule for everyone ("Standing rule: …")
/// or announced as a note ("Attention please: the on-call phone number is
/// 555-0142", a preamble before a value): a note for the organisation, never
/// a correction of the last answer.
pub fn frames_a_rule(clause: &str) -> bool {
    let s = clean(clause);
    framed_rule(&s).is_some() || without_preamble(&s).len() < s.len()
}

/// Whether `text` is told to everyone ("Heads up everyone — from now on …
/// Please tell the owners when they book."): its first sentence is framed
/// as a rule for everyone and none asks, so its requests are the team's to
/// follow, not the agent's to answer.
pub fn told_to_everyone(text: &str) -> bool {
    let sentences = super::text::sentences(text);
    sentences.first().is_some_and(|s| frames_a_rule(s))
        && !sentences.iter().any(|s| super::ends_asking(s))
}

/// The rule a framed line states, without its framing ("Policy: X" → "X"):
/// a framing the list names, or any short head before a colon or a dash
/// that names a rule or everyone in a language of the lexicon ("Quick rule
/// for the team: …", "Regel für alle: …", "Para todos — …"), asked of the
/// agent or not ("Can you make sure everyone knows: …").
pub(super) fn framed_rule(s: &str) -> Option<&str> {
    listed_framing(s)
        .or_else(|| {
            let (head, _, rest) = split_ci(s, &[": ", " — ", " – ", " - "])?;
            let names = words::holds(Class::Rule, head) || words::holds(Class::Everyone, head);
            (names && frames(head, 5) && rest.split_whitespace().count() >= 3)
                .then_some(rest.trim())
        })
        .or_else(|| said_to_everyone(s))
}

/// The rule a line asks the agent to tell everyone, even as a question
/// ("Can you make sure everyone knows that … ?"): [`framed_rule`]'s, when
/// a request form opens it and a word of [`Class::That`] opens the rule. A
/// question framed with a colon is the team's to answer ("Can you ask
/// everyone: who has the spare projector?").
pub(super) fn asked_to_tell(s: &str) -> Option<&str> {
    words::strip_opening(Class::Request, s)?;
    said_to_everyone(s)
}

/// Whether `head` may frame a rule: at most `most` words once a request form
/// is read off (a framing asked of the agent, "Can you make sure everyone
/// knows: …", is counted without it), not the speaker's, holding no value.
fn frames(head: &str, most: usize) -> bool {
    let asked = words::strip_opening(Class::Request, head).map_or(head, |(h, _)| h);
    let short = (1..=most).contains(&asked.split_whitespace().count());
    short && !first_person(head) && !holds_value(head)
}

/// The rule after a short head naming everyone and a word opening what is
/// said ([`Class::That`]): "Can you make sure everyone knows that after 21:00
/// emergency calls go to Dr. Moreau?", "Sagt bitte allen, dass …".
fn said_to_everyone(s: &str) -> Option<&str> {
    const HEAD_WORDS: usize = 8;
    let mut end = 0;
    for raw in s.split_whitespace().take(HEAD_WORDS) {
        let start = end + s[end..].find(raw)?;
        end = start + raw.len();
        let word = raw.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'');
        if start == 0 || !words::holds(Class::That, word) {
            continue;
        }
        let head = s[..start].trim_end_matches([',', ' ']);
        let rest = s[end..].trim();
        let framed = words::holds(Class::Everyone, head) && frames(head, HEAD_WORDS - 2);
        return (framed && rest.split_whitespace().count() >= 3).then_some(rest);
    }
    None
}

/// The rule a line states after a framing of [`RULE_FRAMINGS`].
pub(super) fn listed_framing(s: &str) -> Option<&str> {
    RULE_FRAMINGS.iter().find_map(|framing| {
        let head = s.get(..framing.len())?;
        let rest = &s[framing.len()..];
        // A whole framing: "Team rules are in the wiki" is not "Team rule".
        let whole = framing.ends_with(':') || rest.starts_with(FRAMING_ENDS);
        if !head.eq_ignore_ascii_case(framing) || !whole {
            return None;
        }
        let rest = rest.trim_start_matches(FRAMING_ENDS);
        (!rest.is_empty()).then_some(rest)
    })
}

/// The opening of a subject the rules made from a statement's words, not
/// from a pattern they recognise (a model's subject is better than it).
pub const UNKEYED: &str = "rule:";

/// Openings that mark a correction of what the agent knows ("Correction: …",
/// "Actually, …"); what follows is read as the new value on its subject.
pub(super) const CORRECTIONS: &[&str] = &[
    "correction:",
    "correction,",
    "correction -",
    "actually,",
    "actually ",
    "update:",
    "fyi,",
    "fyi:",
];

/// Whether `text` opens as a correction of what the agent knows
/// ("Correction: …", "Actually, …"): memory's, never a skill's.
pub fn corrects_a_fact(text: &str) -> bool {
    strip_any(&colon_closed(text.trim()), CORRECTIONS).is_some()
}

/// `text` with a space before its first colon closed ("correction : …", as
/// French sets it), so an opening of [`CORRECTIONS`] reads the same.
fn colon_closed(text: &str) -> std::borrow::Cow<'_, str> {
    match text.split_once(" :") {
        Some((head, rest)) if head.split_whitespace().count() <= 2 => {
            format!("{head}:{rest}").into()
        }
        _ => text.into(),
    }
}

/// A correction as a note keeps it: without the opening of [`CORRECTIONS`]
/// that says how it was said ("correction: the shuttle is now 180 MAD" is
/// kept as "The shuttle is now 180 MAD"), or as said when nothing follows.
pub fn unheaded(text: &str) -> String {
    let closed = colon_closed(text.trim());
    match strip_any(&closed, CORRECTIONS).map(str::trim) {
        Some(rest) if !rest.is_empty() => super::capitalise(rest),
        _ => text.trim().to_string(),
    }
}

/// Ways of saying a thing's value changed: "X moved to Y", "X is now Y".
pub(super) const CHANGES: &[&str] = &[
    " has moved to ",
    " moved to ",
    " has been moved to ",
    " is now hosted at ",
    " is now hosted on ",
    " is now at ",
    " is now on ",
    " now lives at ",
    " now lives on ",
    " now runs on ",
    " changed to ",
    " has changed to ",
    " is now ",
];

/// Operational statements without a directive prefix. A correction keeps
/// the new value only: the old one it names (", not B-214") lives in the
/// revision, so no note carries both.
pub(super) fn operational(s: &str, kind_if_unknown: Option<&str>) -> Option<Candidate> {
    operational_as_said(s, kind_if_unknown).map(|mut c| {
        if c.kind == "correction" {
            c.content = without_old_value(&c.content);
        }
        c
    })
}

/// `s` without a ", not <old value>" it names beside the new one ("It's
/// room B-216, not B-214 — …" → "It's room B-216 — …"): only a value (a
/// word with a digit, an identifier) is dropped, never a word ("two
/// reviewers, not one" keeps it).
pub(super) fn without_old_value(s: &str) -> String {
    let lower = s.to_ascii_lowercase();
    let Some(at) = lower.find(", not ") else {
        return s.to_string();
    };
    let rest = &s[at + ", not ".len()..];
    let end = [" — ", " – ", " - ", ", ", "; "]
        .iter()
        .filter_map(|e| rest.find(e))
        .min()
        .unwrap_or(rest.len());
    let old = &rest[..end];
    if !holds_value(old) || old.split_whitespace().count() > 3 {
        return s.to_string();
    }
    format!("{}{}", &s[..at], &rest[end..])
}

fn operational_as_said(s: &str, kind_if_unknown: Option<&str>) -> Option<Candidate> {
    let corrected = strip_any(s, CORRECTIONS);
    // "Correction: …" is operational whatever follows; its subject is found
    // among the live notes when no pattern names it.
    let kind_if_unknown = kind_if_unknown.or(corrected.map(|_| "correction"));
    let s = corrected.unwrap_or(s);
    let content = capitalise(&clean(s));
    if let Some((thing, _, value)) = split_ci(s, CHANGES) {
        let key = thing_key(thing);
        if !key.is_empty() && !value.is_empty() && key.split(' ').count() <= 6 {
            return Some(item(ItemChannel::Operational, "correction", key, content));
        }
    }
    if let Some(rest) = strip_any(s, &["always use ", "use "]) {
        if let Some((x, _, y)) =
            split_ci(rest, &[" instead of ", " rather than ", ", not ", " not "])
        {
            let mut pair = [thing_key(x), thing_key(&clean(y))];
            pair.sort();
            return Some(item(
                ItemChannel::Operational,
                "rule",
                format!("use:{}|{}", pair[0], pair[1]),
                content,
            ));
        }
        // "Always use example_orders for the weekly digest": a rule about the digest.
        if let Some((_, _, y)) = split_ci(rest, &[" for ", " when building ", " to build "]) {
            let key = thing_key(&clean(y));
            let serves_speaker = ["me", "us", "you", "myself"].contains(&key.as_str());
            if !key.is_empty() && !serves_speaker && key.split(' ').count() <= 6 {
                return Some(item(ItemChannel::Operational, "procedure", key, content));
            }
        }
    }
    for (seps, kind) in [
        (
            &[
                " is produced from ",
                " is built from ",
                " is generated from ",
                " comes from ",
            ][..],
            "procedure",
        ),
        (
            &[
                " is hosted at ",
                " is hosted on ",
                " lives at ",
                " is at ",
                " runs on ",
            ][..],
            "hostname",
        ),
        (
            &[" should use ", " must use ", " uses ", " reads from "][..],
            "procedure",
        ),
    ] {
        if let Some((thing, _, value)) = split_ci(s, seps) {
            let key = thing_key(thing);
            if !key.is_empty() && !value.is_empty() && key.split(' ').count() <= 6 {
                return Some(item(ItemChannel::Operational, kind, key, content));
            }
        }
    }
    kind_if_unknown.map(|kind| {
        let key = key_terms(s, 3);
        item(
            ItemChannel::Operational,
            kind,
            format!("{UNKEYED}{key}"),
            content,
        )
    })
}

/// Where a stated preference's object ends: "Portuguese from now on, I read it faster".
pub(super) const OBJECT_ENDS: &[&str] = &[
    ",",
    ";",
    " from now on",
    " going forward",
    " from today",
    " please",
    " because",
    " since",
    " as i ",
    " when ",
    " so i ",
    " so that ",
    " if you ",
];

/// `what` up to where the object of a preference ends.
pub(super) fn object(what: &str) -> String {
    let lower = what.to_lowercase();
    let end = OBJECT_ENDS
        .iter()
        .filter_map(|e| lower.find(e))
        .min()
        .unwrap_or(what.len());
    clean(what.get(..end).unwrap_or(what))
}

/// Whether a statement says its value changed: its preamble holds a word of
/// change ("Small correction, …", "Update for everyone: …"), or the
/// statement holds one outside a standing phrase ("… is at 09:45 now", not
/// "from now on"), and it names a value.
pub(super) fn says_changed(preamble: &str, stated: &str) -> bool {
    if !holds_value(stated) || first_person(stated) {
        return false;
    }
    if !preamble.is_empty() && words::holds(Class::Changed, preamble) {
        return true;
    }
    let words = words_of(stated);
    let standing: Vec<(usize, usize)> = words::find_all(Class::Standing, &words)
        .into_iter()
        .map(|(at, len)| (at, at + len))
        .collect();
    words::find_all(Class::Changed, &words)
        .into_iter()
        .any(|(at, _)| !standing.iter().any(|&(a, e)| a <= at && at < e))
        || words::holds_unspaced(Class::Changed, stated)
}

/// The thing a heading of change names when the statement after it does
/// not ("Change for the Amber Hall: from today it's max 25 visitors" →
/// "Amber Hall"): the heading's words after its word of change that are
/// names, values or longer words, less words naming everyone or a rule.
/// A correction that keeps it names the note it corrects
/// (`TurnLoop::correction_subject` finds that note by the words they
/// share). `None` when the heading names nothing more, or the statement
/// names it already.
pub(super) fn heading_subject(head: &str, stated: &str) -> Option<String> {
    let compared = words_of(head);
    let (at, len) = words::find(Class::Changed, &compared)?;
    let said: Vec<&str> = head
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|w| !w.is_empty())
        .collect();
    // A heading whose words as written and as compared do not line up
    // (a hyphen or an apostrophe inside one) names nothing.
    if compared.len() != said.len() {
        return None;
    }
    let named: Vec<&str> = said[at + len..]
        .iter()
        .copied()
        .filter(|w| {
            // A name or a value, or a longer word: "for", "the", "beim" go.
            let named =
                w.chars().any(|c| c.is_uppercase() || c.is_ascii_digit()) || w.chars().count() > 4;
            named && !words::holds(Class::Everyone, w) && !words::holds(Class::Rule, w)
        })
        .collect();
    let stated = words_of(stated);
    let new = named
        .iter()
        .any(|w| !stated.iter().any(|s| *s == words_of(w).concat()));
    (!named.is_empty() && new).then(|| named.join(" "))
}

/// Whether `s` names a value a note is kept for: a word holding a digit, an
/// `_`, an inner `.` or `-` with a digit, or opening with `#` (a table, a
/// host, a channel, a time, an amount).
pub(super) fn holds_value(s: &str) -> bool {
    s.split_whitespace().any(|w| {
        let w = w.trim_matches(|c: char| !(c.is_alphanumeric() || "#_".contains(c)));
        w.chars().any(|c| c.is_ascii_digit())
            || w.contains('_')
            || (w.starts_with('#') && w.len() > 1)
            || (w.contains('.') && w.len() > 4)
    })
}

/// What separates a preamble from what it frames.
pub(super) const PREAMBLE_ENDS: &[&str] = &[": ", ", ", " — ", " – ", " - ", " that "];

/// `s` without a short preamble that frames what follows ("Heads up, …",
/// "FYI all: …", "Just so everyone knows, …", "Please note that …"): read
/// by its shape, not from a list — at most five words before the first `:`,
/// `,`, dash or "that", naming no value and not the speaker, before a
/// statement of three words or more that names one.
pub(super) fn without_preamble(s: &str) -> &str {
    // "Correction: …" is a framing of its own (`operational` reads it).
    if strip_any(s, CORRECTIONS).is_some() {
        return s;
    }
    let Some((head, _, rest)) = split_ci(s, PREAMBLE_ENDS) else {
        return s;
    };
    let head_words = head.split_whitespace().count();
    let framed = (1..=5).contains(&head_words)
        && !holds_value(head)
        && !first_person(head)
        && (holds_value(rest) || words::holds(Class::Standing, rest))
        && rest.split_whitespace().count() >= 3
        // "Nobody else parks there, not even for 5 minutes": a limit
        // qualifies the head, which is the statement.
        && !opens_with_a_limit(rest);
    if framed {
        rest
    } else {
        s
    }
}

/// A standing rule stated rather than asked, naming no value ("Hazmat
/// shipments always need a sign-off from compliance"): a standing word of
/// the lexicon in a statement of four words or more, not said of the
/// speaker. An administrator is asked to keep it; anyone else is told
/// changes need one (the write policy decides, not this label).
pub(super) fn standing_statement(s: &str) -> Option<Candidate> {
    // Said of the speaker, in a language that drops its pronouns too ("Od
    // dziś pracuję na nocnej zmianie"): theirs, never a rule.
    if of_themselves(s) || s.split_whitespace().count() < 4 || !words::holds(Class::Standing, s) {
        return None;
    }
    operational(s, Some("rule"))
}

/// The kind of a note [`valued_statement`] reads: what an `@notes:` text
/// the patterns do not key is, too.
pub use memory::policy::VALUED_KIND;

/// A statement about the team's work that the patterns do not key, known by
/// what it holds: not said of the speaker, naming a value ("The on-call
/// handover happens at 09:30"). An administrator is asked to keep it as a
/// note; anyone else is told operational changes need one (the write policy
/// decides, not this label).
pub(super) fn valued_statement(s: &str) -> Option<Candidate> {
    if first_person(s) || !holds_value(s) || s.split_whitespace().count() < 3 {
        return None;
    }
    let rest = strip_any(s, DIRECTIVES).map_or(s, |r| r.trim_start_matches([',', ' ']));
    operational(rest, Some(VALUED_KIND))
}
