//! The offline model: rules that recognise the statements the write policy
//! sorts (identity and role claims, preferences, procedures, one-off requests:
//! README.md, "What the assistant remembers, and who decides"), and a
//! responder that answers from memory. Deterministic, no network.

use super::{Extractor, LlmError, ReplyContext, Responder};
use memory::store::Retrieved;
use memory::{Candidate, ItemChannel};

#[derive(Debug, Default, Clone, Copy)]
pub struct OfflineExtractor;

#[derive(Debug, Default, Clone, Copy)]
pub struct OfflineResponder;

#[async_trait::async_trait]
impl Extractor for OfflineExtractor {
    async fn extract(&self, text: &str) -> Result<Vec<Candidate>, LlmError> {
        Ok(extract(text))
    }
}

/// Case-insensitive ASCII prefix strip that keeps the remainder's case.
fn strip_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| s[prefix.len()..].trim_start())
}

fn strip_any<'a>(s: &'a str, prefixes: &[&str]) -> Option<&'a str> {
    prefixes.iter().find_map(|p| strip_ci(s, p))
}

/// Split `s` at the first of `seps` (ASCII, case-insensitive): (before, sep, after).
fn split_ci<'a>(s: &'a str, seps: &[&'static str]) -> Option<(&'a str, &'static str, &'a str)> {
    let lower = s.to_ascii_lowercase();
    seps.iter()
        .filter_map(|sep| lower.find(sep).map(|i| (i, *sep)))
        .min_by_key(|(i, _)| *i)
        .map(|(i, sep)| (s[..i].trim(), sep, s[i + sep.len()..].trim()))
}

fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut current = String::new();
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            current.push(c);
            let ends =
                matches!(c, '.' | '!' | '?') && chars.peek().is_none_or(|n| n.is_whitespace());
            if ends {
                let s = current.trim().to_string();
                if !s.is_empty() {
                    out.push(s);
                }
                current.clear();
            }
        }
        let s = current.trim().to_string();
        if !s.is_empty() {
            out.push(s);
        }
    }
    out
}

fn clean(s: &str) -> String {
    s.trim()
        .trim_end_matches(['.', '!', ',', ';'])
        .trim()
        .to_string()
}

/// `s` with its first letter upper case.
pub fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// A subject key for "the <thing>": lower case, articles and possessives dropped.
fn thing_key(thing: &str) -> String {
    let mut words: Vec<String> = thing
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric() && c != '_' && c != '-')
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect();
    while words.first().is_some_and(|w| {
        ["the", "our", "my", "your", "a", "an", "this", "that", "all"].contains(&w.as_str())
    }) {
        words.remove(0);
    }
    words.join(" ")
}

fn key_terms(s: &str, n: usize) -> String {
    memory::terms::terms(s)
        .into_iter()
        .take(n)
        .collect::<Vec<_>>()
        .join(" ")
}

/// A personal item (said about the speaker).
fn personal_item(kind: &str, subject: impl Into<String>, content: String) -> Candidate {
    item(ItemChannel::Personal, kind, subject.into(), content)
}

fn item(channel: ItemChannel, kind: &str, subject: String, content: String) -> Candidate {
    Candidate {
        channel,
        kind: kind.into(),
        subject,
        content,
    }
}

const TASK_STARTS: &[&str] = &[
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

const DIRECTIVES: &[&str] = &[
    "from now on,",
    "from now on",
    "rule:",
    "going forward,",
    "going forward",
    "new rule:",
];

/// The opening of a subject the rules made from a statement's words, not
/// from a pattern they recognise (a model's subject is better than it).
pub const UNKEYED: &str = "rule:";

pub use memory::policy::ANSWER_IN_SUBJECT;

/// Openings that mark a correction of what the agent knows ("Correction: …",
/// "Actually, …"); what follows is read as the new value on its subject.
const CORRECTIONS: &[&str] = &[
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
    strip_any(text.trim(), CORRECTIONS).is_some()
}

/// Ways of saying a thing's value changed: "X moved to Y", "X is now Y".
const CHANGES: &[&str] = &[
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

/// Operational statements without a directive prefix.
fn operational(s: &str, kind_if_unknown: Option<&str>) -> Option<Candidate> {
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
const OBJECT_ENDS: &[&str] = &[
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
fn object(what: &str) -> String {
    let lower = what.to_lowercase();
    let end = OBJECT_ENDS
        .iter()
        .filter_map(|e| lower.find(e))
        .min()
        .unwrap_or(what.len());
    clean(what.get(..end).unwrap_or(what))
}

/// Asking to be answered in a language, in a few languages.
const ANSWER_IN: &[&str] = &[
    "answer me in ",
    "answer me always in ",
    "always answer me in ",
    "always reply in ",
    "always answer in ",
    "reply in ",
    "reply to me in ",
    "respond in ",
    "respond to me in ",
    "answer in ",
    "talk to me in ",
    "write to me in ",
    "speak to me in ",
    "responde-me em ",
    "responde-me sempre em ",
    "responda-me em ",
    "responda-me sempre em ",
    "responde em ",
    "responda em ",
    "fala comigo em ",
    "respóndeme en ",
    "respondeme en ",
    "respóndeme siempre en ",
    "responde en ",
    "contesta en ",
    "contéstame en ",
    "réponds-moi en ",
    "répondez-moi en ",
    "antworte mir auf ",
    "antworte mir immer auf ",
    "antworte auf ",
    "rispondimi in ",
    "rispondi in ",
];

/// "I work from Lisbon" as said of the speaker: "Works from Lisbon".
const FIRST_PERSON_VERBS: &[(&str, &str)] = &[
    ("i work ", "Works "),
    ("i live ", "Lives "),
    ("i manage ", "Manages "),
    ("i lead ", "Leads "),
    ("i own ", "Owns "),
    ("i report to ", "Reports to "),
    ("i sit ", "Sits "),
    ("i'm based ", "Based "),
    ("i am based ", "Based "),
];

fn personal(s: &str) -> Option<Candidate> {
    let s = strip_ci(s, "please ").unwrap_or(s);
    if let Some(lang) = strip_any(s, ANSWER_IN) {
        let lang = object(lang);
        if !lang.is_empty() {
            let said = format!("Wants answers in {}", capitalise(&lang));
            return Some(personal_item("preference", ANSWER_IN_SUBJECT, said));
        }
    }
    for (opening, says) in FIRST_PERSON_VERBS {
        if let Some(rest) = strip_ci(s, opening) {
            let said = format!("{says}{}", clean(rest));
            let head = key_terms(rest, 2);
            return Some(personal_item("fact", format!("fact:{head}"), said));
        }
    }
    if let Some(name) = strip_any(s, &["call me ", "please call me "]) {
        let name = object(name);
        let said = format!("Wants to be called {name}");
        // How to address them: a preference, given to every reply.
        return Some(personal_item("preference", "name", said));
    }
    if let Some(name) = strip_any(s, &["my name is "]) {
        let name = object(name);
        let said = format!("Their name is {name}");
        return Some(personal_item("identity", "name", said));
    }
    if let Some(what) = strip_any(s, &["i am ", "i'm ", "i’m "]) {
        let what = clean(what);
        let lower = what.to_ascii_lowercase();
        if lower.starts_with("your ")
            || lower.starts_with("the ")
            || lower.starts_with("a ")
            || lower.starts_with("an ")
        {
            let shown = strip_ci(&what, "your ")
                .map(|r| format!("the {r}"))
                .unwrap_or(what.clone());
            let said = format!("Introduced themselves as {shown}");
            return Some(personal_item("role_claim", "role", said));
        }
        let said = format!("Said they are {what}");
        return Some(personal_item("identity", "identity", said));
    }
    if let Some(what) = strip_any(
        s,
        &["i prefer ", "i'd prefer ", "i would prefer ", "i like "],
    ) {
        let what = object(what);
        let head = key_terms(&what, 1);
        let said = format!("Prefers {what}");
        return Some(personal_item("preference", format!("prefer:{head}"), said));
    }
    if let Some(what) = strip_any(s, &["please always ", "always "]) {
        let what = clean(what);
        let head = key_terms(&what, 2);
        let said = format!("Wants you to always {what}");
        return Some(personal_item("preference", format!("always:{head}"), said));
    }
    None
}

/// Greetings and thanks that open a message: never memory themselves.
const GREETINGS: &[&str] = &[
    "hi,",
    "hi!",
    "hi ",
    "hello,",
    "hello!",
    "hello ",
    "hey,",
    "hey!",
    "hey ",
    "thanks!",
    "thanks,",
    "thanks.",
    "thank you!",
    "thank you,",
    "thank you.",
    "good morning,",
    "good morning!",
    "good afternoon,",
    "morning all,",
    "morning,",
    "ok,",
    "ok so",
    "okay,",
];

/// A greeting-only clause ("Thanks!", "hello"): nothing to remember or answer.
fn is_greeting(clause: &str) -> bool {
    let t = clause
        .trim()
        .trim_end_matches(['.', '!', ','])
        .to_lowercase();
    matches!(
        t.as_str(),
        "hi" | "hello"
            | "hey"
            | "thanks"
            | "thank you"
            | "thx"
            | "ok"
            | "okay"
            | "cool"
            | "great"
            | "good morning"
            | "morning"
            | "good afternoon"
            | "bye"
            | "cheers"
    )
}

/// `s` without an opening greeting ("Hi, I prefer …" → "I prefer …").
fn without_greeting(s: &str) -> &str {
    let mut s = s.trim();
    while let Some(rest) = strip_any(s, GREETINGS) {
        if rest.len() == s.len() {
            break;
        }
        s = rest.trim_start_matches([',', '!', ' ']);
    }
    s
}

/// Where one sentence holds two statements: "I prefer short answers and I work from Lisbon".
const CLAUSE_BREAKS: &[&str] = &["; ", ", and i ", " and i ", ", but ", " but i "];

/// The clauses of `text`: its sentences, split where one holds two
/// statements, without opening greetings. Questions keep their `?`.
pub fn clauses(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for sentence in sentences(text) {
        let mut rest = without_greeting(&sentence).to_string();
        while let Some((before, sep, after)) = split_ci(&rest, CLAUSE_BREAKS) {
            if !before.is_empty() {
                out.push(before.to_string());
            }
            // " and I work …" keeps its "I".
            rest = if sep.trim_end().ends_with(" i") {
                format!("I {after}")
            } else {
                after.to_string()
            };
        }
        let rest = rest.trim();
        if !rest.is_empty() && !is_greeting(rest) {
            out.push(rest.to_string());
        }
    }
    out
}

/// Words a speaker uses of themselves, in the languages the rules know.
const FIRST_PERSON: &[&str] = &[
    "i", "i'm", "i’m", "im", "i've", "i'd", "i'll", "me", "my", "mine", "myself", "eu", "meu",
    "minha", "comigo", "yo", "mi", "mí", "conmigo", "je", "j'ai", "moi", "mon", "ma", "mes", "ich",
    "mich", "mir", "mein", "meine", "io", "mio", "mia",
];

/// Whether a clause is said by the speaker of themselves ("I …", "my …",
/// "call me …", "responde-me …").
pub fn first_person(clause: &str) -> bool {
    clause
        .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’'))
        .flat_map(|w| w.split('-'))
        .any(|w| FIRST_PERSON.contains(&w.to_lowercase().as_str()))
}

/// Whether a clause asks or requests something (a question, "show me …",
/// "can you …"): it is answered, and never read for memory.
fn is_request(clause: &str) -> bool {
    matches!(classify(clause), Some(c) if c.channel == ItemChannel::Task)
}

/// Whether `text` asks or requests anything: then it is answered, whatever
/// else it holds.
pub fn asks(text: &str) -> bool {
    clauses(text).iter().any(|c| is_request(c))
}

/// The clauses of `text` that may carry something to remember: not
/// questions, requests or greetings. Empty: no extraction is needed.
pub fn statements(text: &str) -> Vec<String> {
    clauses(text)
        .into_iter()
        .filter(|c| !is_request(c))
        .collect()
}

/// What the rules make of one clause the speaker said, when they recognise
/// it: its channel, kind, subject and normalised text.
pub fn label(clause: &str) -> Option<Candidate> {
    classify(clause).filter(|c| c.channel != ItemChannel::Task)
}

/// Whether a clause asks the agent to serve the speaker a certain way
/// ("answer me in …", "call me …"): such an instruction is personal, even
/// with "from now on".
fn serves_speaker(s: &str) -> bool {
    let s = strip_ci(s, "please ").unwrap_or(s);
    personal(s).is_some_and(|c| c.kind == "preference" || c.subject == "name")
}

/// Classify one sentence. `None` for chit-chat.
fn classify(sentence: &str) -> Option<Candidate> {
    let question = sentence.trim_end().ends_with('?');
    let s = clean(sentence.trim_end_matches('?'));
    if s.is_empty() {
        return None;
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
    if question
        || TASK_STARTS
            .iter()
            .any(|t| lower.starts_with(t) || bare.starts_with(t))
    {
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
        return operational(&s, None);
    }
    personal(&s).or_else(|| operational(&s, None))
}

/// Extract candidate items from a message.
pub fn extract(text: &str) -> Vec<Candidate> {
    clauses(text).iter().filter_map(|s| classify(s)).collect()
}

#[async_trait::async_trait]
impl Responder for OfflineResponder {
    async fn respond(&self, ctx: &ReplyContext<'_>) -> Result<String, LlmError> {
        Ok(respond(ctx))
    }
    fn reads_prompt(&self) -> bool {
        false
    }
}

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

fn respond_from_memory(ctx: &ReplyContext<'_>) -> String {
    let matches = best_matches(ctx.memory);
    if matches.is_empty() {
        return NOTHING_IN_MEMORY.into();
    }
    let best = matches[0].hits;
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
    let mut out = lines.join("\n");
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

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Candidate {
        let mut v = extract(text);
        assert_eq!(v.len(), 1, "{text}: {v:?}");
        v.remove(0)
    }

    #[test]
    fn operational_statements_share_subjects() {
        let a = one("From now on the daily report uses example_orders");
        let b = one("the daily report uses example_archive.");
        assert_eq!(a.channel, ItemChannel::Operational);
        assert_eq!(a.subject, "daily report");
        assert_eq!(a.subject, b.subject);
        assert_eq!(a.content, "The daily report uses example_orders");
        assert_eq!(
            one("The weekly report is produced from sales_2024").subject,
            "weekly report"
        );
        let host = one("The build server is at ci.example.com");
        assert_eq!(
            (host.kind.as_str(), host.subject.as_str()),
            ("hostname", "build server")
        );
        let r1 = one("Always use example_orders, not example_archive");
        let r2 = one("always use example_archive instead of example_orders");
        assert_eq!(r1.subject, r2.subject);
        assert_eq!(
            one("Rule: never share passwords").channel,
            ItemChannel::Operational
        );
    }

    #[test]
    fn identity_and_preferences_are_personal() {
        let c = one("I am your manager");
        assert_eq!(
            (c.channel, c.kind.as_str()),
            (ItemChannel::Personal, "role_claim")
        );
        assert_eq!(c.content, "Introduced themselves as the manager");
        assert_eq!(one("My name is Ana").subject, "name");
        assert_eq!(one("call me Bo").subject, "name");
        assert_eq!(one("I prefer short answers").kind, "preference");
        assert_eq!(one("Answer me in English").subject, "answer-in");
        assert_eq!(
            one("please always answer with bullet points").kind,
            "preference"
        );
    }

    #[test]
    fn requests_are_tasks() {
        for t in [
            "Produce today's daily report",
            "Can you show the report?",
            "show me the hosts",
            "Where is the build server?",
            "Please draft a skill called weekly-digest for review: list the open incidents",
            "please summarise the incidents",
            "Please show the report",
            "daily report please",
            "The weekly numbers, please",
        ] {
            assert_eq!(one(t).channel, ItemChannel::Task, "{t}");
        }
        // About the speaker, "please" or not: theirs to keep.
        assert_eq!(one("Call me Bo, please").channel, ItemChannel::Personal);
    }

    #[test]
    fn mixed_message_splits_into_items() {
        let v = extract("I am your manager. From now on the daily report uses example_archive");
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].channel, ItemChannel::Personal);
        assert_eq!(v[1].channel, ItemChannel::Operational);
        assert!(extract("hello there").is_empty());
        assert!(extract("").is_empty());
    }

    #[test]
    fn hosts_with_dots_stay_in_one_sentence() {
        let v = extract("The wiki is at wiki.example.com. Thanks!");
        assert_eq!(v.len(), 1);
        assert!(v[0].content.contains("wiki.example.com"));
    }

    #[test]
    fn preferences_are_personal_in_any_phrasing_and_language() {
        for (said, kept) in [
            (
                "Please answer me in Portuguese from now on, I read it faster",
                "Wants answers in Portuguese",
            ),
            (
                "From now on, answer me in Portuguese",
                "Wants answers in Portuguese",
            ),
            ("Reply in Spanish please", "Wants answers in Spanish"),
            (
                "Responde-me sempre em português",
                "Wants answers in Português",
            ),
            ("Respóndeme en español", "Wants answers in Español"),
            ("Antworte mir auf Deutsch", "Wants answers in Deutsch"),
            ("Réponds-moi en français", "Wants answers in Français"),
            ("Call me Bo", "Wants to be called Bo"),
            ("Please call me Bo from now on", "Wants to be called Bo"),
            ("I prefer short answers", "Prefers short answers"),
            (
                "I'd prefer bullet points, because I skim",
                "Prefers bullet points",
            ),
        ] {
            let c = one(said);
            assert_eq!(c.channel, ItemChannel::Personal, "{said}");
            assert_eq!(c.content, kept, "{said}");
        }
        assert_eq!(one("Reply in Spanish please").subject, ANSWER_IN_SUBJECT);
    }

    #[test]
    fn corrections_name_the_subject_of_what_they_correct() {
        let note = one("The staging database is at pg-staging-03.internal, port 5432.");
        for said in [
            "Correction: the staging database moved to pg-staging-04.internal, same port.",
            "Actually, the staging database is now pg-staging-04.internal",
            "The staging database has moved to pg-staging-04.internal",
            "FYI: the staging database now lives at pg-staging-04.internal",
        ] {
            let c = one(said);
            assert_eq!(c.channel, ItemChannel::Operational, "{said}");
            assert_eq!(c.subject, note.subject, "{said}");
            assert!(c.content.contains("pg-staging-04.internal"), "{said}");
            assert!(
                !c.content.to_lowercase().starts_with("correction"),
                "{said}"
            );
        }
        // A correction no pattern keys is still operational (its subject is
        // found among the live notes).
        let c = one("Correction: deploys to production now happen only before 14:00.");
        assert_eq!(
            (c.channel, c.kind.as_str()),
            (ItemChannel::Operational, "correction")
        );
        assert!(c.subject.starts_with(UNKEYED));
    }

    #[test]
    fn questions_requests_and_greetings_are_never_statements() {
        for text in [
            "Where do I find who is on call this weekend?",
            "Remind me to renew my badge on Friday.",
            "Thanks! One more: who reviews deploys, and until what time can I ship?",
            "Hi!",
            "Can you show the report?",
        ] {
            assert!(
                statements(text).is_empty(),
                "{text}: {:?}",
                statements(text)
            );
        }
        assert!(asks("Hi, I work from Lisbon. How do I connect to the VPN?"));
        assert_eq!(
            statements(
                "Hi, I prefer short answers and I work from the Lisbon office. How do I connect?"
            ),
            vec!["I prefer short answers", "I work from the Lisbon office."]
        );
        assert!(!asks("I prefer short answers"));
    }

    #[test]
    fn first_person_is_said_of_oneself() {
        for (clause, mine) in [
            ("I work on payments", true),
            ("my desk is on the third floor", true),
            ("Responde-me sempre em português", true),
            ("He told you in private", false),
            ("The VPN is at vpn.example.com", false),
        ] {
            assert_eq!(first_person(clause), mine, "{clause}");
        }
    }
}
