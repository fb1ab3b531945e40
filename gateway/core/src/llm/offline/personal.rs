//! Personal statements: what the speaker says of themselves, prefers, has, and is called.

use super::*;

/// Asking to be answered in a language, in a few languages.
pub(super) const ANSWER_IN: &[&str] = &[
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

/// "I work from Lisbon" as said of the speaker: "Works from Lisbon"; and
/// whether the verb says where they work (a place it names is their unit).
pub(super) const FIRST_PERSON_VERBS: &[(&str, &str, bool)] = &[
    ("i work ", "Works ", true),
    ("i live ", "Lives ", false),
    ("i manage ", "Manages ", false),
    ("i lead ", "Leads ", false),
    ("i own ", "Owns ", false),
    ("i report to ", "Reports to ", false),
    ("i sit ", "Sits ", true),
    ("i'm based ", "Based ", true),
    ("i am based ", "Based ", true),
];

/// The subject of a person's preference about how long or detailed their
/// replies are, whatever words it is said in.
pub const REPLY_LENGTH_SUBJECT: &str = "prefer:reply-length";

/// `item` keyed by the length it names: a person's preference naming how long
/// or detailed their replies are ("Jag föredrar korta svar", later "ge mig
/// hellre längre och utförliga svar") is one subject however it is put, by
/// the rules or a model, so a change of mind is asked as replacing the old
/// and a yes leaves one. A reply language keeps its own subject.
pub fn keyed_by_length(item: &Candidate) -> Option<Candidate> {
    (item.channel == ItemChannel::Personal
        && item.kind == "preference"
        && item.subject != ANSWER_IN_SUBJECT
        && item.subject != REPLY_LENGTH_SUBJECT
        && words::holds(Class::Length, &item.content))
    .then(|| Candidate {
        subject: REPLY_LENGTH_SUBJECT.into(),
        ..item.clone()
    })
}

pub(super) fn personal(s: &str) -> Option<Candidate> {
    let s = strip_ci(s, "please ").unwrap_or(s);
    if let Some(lang) = strip_any(s, ANSWER_IN) {
        let lang = object(lang);
        // "Answer me in bullet points" names no language.
        if words::language_named(&lang).is_some() {
            let said = format!("Wants answers in {}", capitalise(&lang));
            return Some(personal_item("preference", ANSWER_IN_SUBJECT, said));
        }
    }
    for (opening, says, at_work) in FIRST_PERSON_VERBS {
        if let Some(rest) = strip_ci(s, opening) {
            let said = format!("{says}{}", clean(rest));
            // The unit they work in is one subject, whatever its name; a
            // place named by its code or name, where they work or sit.
            if names_a_unit(rest) || (*at_work && (names_a_code(rest) || names_a_place(rest))) {
                return Some(personal_item("fact", UNIT_SUBJECT, said));
            }
            let head = key_terms(rest, 2);
            return Some(personal_item("fact", format!("fact:{head}"), said));
        }
    }
    // "I'm the office manager" claims a role (below), "I'm at the Valencia
    // shop" says where they are.
    let claims_a_role = strip_any(s, &["i am ", "i'm ", "i’m "]).is_some_and(|what| {
        ["your ", "the ", "a ", "an "]
            .iter()
            .any(|a| strip_ci(what, a).is_some())
    });
    if let Some(unit) = belongs(s).filter(|_| !claims_a_role) {
        return Some(unit);
    }
    if let Some(manager) = managed_by(s) {
        return Some(manager);
    }
    if let Some(name) = strip_any(s, &["call me ", "please call me "])
        .or_else(|| named_as(s))
        .or_else(|| called(s))
    {
        let name = object(name);
        let said = format!("Wants to be called {name}");
        // How to address them: a preference, given to every reply.
        return Some(personal_item("preference", "name", said));
    }
    if let Some(name) = strip_any(s, &["my name is "]) {
        let name = object(name);
        let said = format!("Their name is {name}");
        return Some(personal_item(memory::policy::IDENTITY_KIND, "name", said));
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
            return Some(personal_item(memory::policy::ROLE_CLAIM_KIND, "role", said));
        }
        let said = format!("Said they are {what}");
        return Some(personal_item(
            memory::policy::IDENTITY_KIND,
            "identity",
            said,
        ));
    }
    if let Some(what) = strip_any(
        s,
        &[
            "i prefer ",
            "i'd prefer ",
            "i would prefer ",
            "i'd rather ",
            "i would rather ",
            "i like ",
        ],
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
    preferred(s).or_else(|| possessed(s))
}

/// What the speaker says they are, in any language whose "I am" the lexicon
/// knows ("btw jestem wegetarianinem", "lisztérzékeny vagyok", "saya
/// vegetarian"): a lasting fact of theirs, kept as said and asked like any.
/// One-offs ("I'm off sick today") never reach here (`transient`); English
/// said at the start has its own reading (`personal`: a role claimed, an
/// identity). Keyed by what they say they are, so a change of it is asked
/// as one; where they work, by their unit.
pub(super) fn said_of_self(s: &str) -> Option<Candidate> {
    let words = words_of(s);
    let rest: Vec<&str> = match words::find(Class::Am, &words) {
        Some((at, len)) => words[..at]
            .iter()
            .chain(&words[at + len..])
            .map(String::as_str)
            .collect(),
        None if words::holds_unspaced(Class::Am, s) => words.iter().map(String::as_str).collect(),
        None => return None,
    };
    if rest.is_empty() || for_everyone(s) {
        return None;
    }
    let said = capitalise(&clean(s));
    if names_a_unit(s) || names_a_code(s) || names_a_place(s) {
        return Some(personal_item("fact", UNIT_SUBJECT, said));
    }
    // Who they are: beside a claimed change, part of the pose (policy::poses).
    let subject = format!("fact:{}", key_terms(&rest.join(" "), 2));
    Some(personal_item(memory::policy::IDENTITY_KIND, subject, said))
}

/// What the speaker prefers, said in another language of the lexicon
/// ("Prefiro respostas curtas", "Wolałabym, żebyś …"): kept as said.
/// English has its own openings above, with what follows normalised.
pub(super) fn preferred(s: &str) -> Option<Candidate> {
    let (what, code) = words::strip_opening(Class::Prefer, s)?;
    if code == "en" || what.is_empty() {
        return None;
    }
    let head = key_terms(what, 1);
    let said = capitalise(&clean(s));
    Some(personal_item("preference", format!("prefer:{head}"), said))
}

/// Something of the speaker's with a value, said with their possessive
/// opening the statement (past one short word: "fyi my …") or following a comma ("My desk is in room 4.12",
/// "I moved, my desk is in room 2.07 now"): a fact about them, on the
/// subject of the thing they named, so a new value conflicts with the old
/// and is asked as a contradiction. Kept from the possessive on, as said.
pub(super) fn possessed(s: &str) -> Option<Candidate> {
    // Or past one short word opening a statement ("fyi my van is …", "btw
    // my desk is …").
    fn past_a_word(part: &str) -> Option<&str> {
        let (first, rest) = part.split_once(' ')?;
        let short = first.chars().count() <= 4 && first.chars().all(char::is_alphabetic);
        short.then_some(rest.trim_start())
    }
    // ("is my van …?" asks; `asks` itself reads statements through here.)
    let asked = ends_asking(s);
    let from = std::iter::once(s)
        .chain(s.match_indices(", ").map(|(i, sep)| &s[i + sep.len()..]))
        .flat_map(|part| std::iter::once(part).chain(past_a_word(part).filter(|_| !asked)))
        .find(|part| {
            let words = words_of(part);
            words::find(Class::Mine, &words).is_some_and(|(at, _)| at == 0)
        })?;
    let words = words_of(from);
    let (_, len) = words::find(Class::Mine, &words)?;
    if !holds_value(from) || words.len() < len + 2 {
        return None;
    }
    let thing = words[len..]
        .iter()
        .take(2)
        .cloned()
        .collect::<Vec<_>>()
        .join(" ");
    let head = key_terms(&thing, 1);
    if head.is_empty() {
        return None;
    }
    Some(personal_item(
        "fact",
        format!("fact:{head}"),
        capitalise(&clean(from)),
    ))
}

/// The name in a request to be addressed by one, known by its shape: a verb
/// of at most two words, then "me as", then a capitalised name ("address me
/// as Dr. Rossi", "refer to me as Kim"). `None` for anything else ("treat
/// me as a beginner" names no one).
pub(super) fn named_as(s: &str) -> Option<&str> {
    let lower = s.to_lowercase();
    let at = lower.find(" me as ")?;
    let verb = &s[..at];
    let name = s[at + " me as ".len()..].trim_start();
    let verb_words = verb.split_whitespace().count();
    let capitalised = name.chars().next().is_some_and(char::is_uppercase);
    ((1..=2).contains(&verb_words) && capitalised && !first_person(verb)).then_some(name)
}

/// The name a speaker asks to be called, in any language of the lexicon
/// ("call me Bo", "passar a me chamar de Bia", "kald mig Mette"): the
/// capitalised words after a phrase of naming, wherever it stands.
pub(super) fn called(s: &str) -> Option<&str> {
    if let Some(name) = called_unspaced(s) {
        return Some(name);
    }
    let tokens: Vec<(usize, &str)> = s
        .split_whitespace()
        .map(|t| (t.as_ptr() as usize - s.as_ptr() as usize, t))
        .collect();
    let words: Vec<String> = tokens
        .iter()
        .map(|(_, t)| {
            t.trim_matches(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '-'))
                .to_lowercase()
                .replace('’', "'")
        })
        .collect();
    let (at, len) = words::find(Class::Naming, &words)?;
    // A phrase of naming is the speaker's when it is asked of the agent (it
    // opens the clause, after courtesy at most: "kall meg Eiki"), names the
    // speaker ("nenn mich"), or follows their own words ("I go by Sam"):
    // "client files can go by WeTransfer now" calls no one anything.
    let asked = words[..at]
        .iter()
        .all(|w| words::is_word(Class::Courtesy, w) || words::is_word(Class::Request, w));
    let speaker = |w: &String| words::is_word(Class::Speaker, w);
    if !asked && !words[..at + len].iter().any(speaker) {
        return None;
    }
    let courteous =
        |w: &String| words::is_word(Class::Courtesy, w) || words::is_word(Class::Request, w);
    // Courtesy between the phrase and the name ("nenn mich bitte Kalle"), or
    // one small word before a capitalised one ("chiamami pure Gigi", "noem
    // me maar Bas").
    let mut skip = words[at + len..]
        .iter()
        .take_while(|w| courteous(w))
        .count();
    let capital = |t: &str| t.chars().next().is_some_and(char::is_uppercase);
    if let [(_, filler), (_, next), ..] = &tokens[(at + len + skip).min(tokens.len())..] {
        if !capital(filler) && filler.chars().count() <= 5 && capital(next) {
            skip += 1;
        }
    }
    // A script without capitals (Arabic, Hebrew, Devanagari, Hangul): its
    // first two words, up to a word of courtesy ("תקרא לי דני בבקשה").
    let caseless = |t: &str| {
        t.chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() && !c.is_uppercase() && !c.is_lowercase())
    };
    let after = (at + len + skip).min(tokens.len());
    let name: Vec<&(usize, &str)> = tokens[after..]
        .iter()
        .zip(&words[after..])
        .take_while(|((_, t), w)| capital(t) || (caseless(t) && !courteous(w)))
        .take(if tokens.get(after).is_some_and(|(_, t)| caseless(t)) {
            2
        } else {
            3
        })
        .map(|(t, _)| t)
        .collect();
    let (first, _) = name.first()?;
    let (last, t) = name.last()?;
    let end = last + t.len();
    Some(s[*first..end].trim_end_matches(['.', ',', '!', '?', ';', ':', '،']))
}

/// The name asked for in a language written without spaces: quoted
/// ("「ハル」と呼んでください"), else the word the phrase is joined to — before
/// a phrase that opens with a particle ("ケンって呼んで"), after one that does
/// not ("叫我小王吧").
fn called_unspaced(s: &str) -> Option<&str> {
    let at = words::find_unspaced(Class::Naming, s)?;
    let quoted = [('「', '」'), ('『', '』'), ('“', '”'), ('"', '"')]
        .iter()
        .find_map(|&(open, close)| {
            let start = s.find(open)? + open.len_utf8();
            let len = s[start..].find(close)?;
            Some(s[start..start + len].trim())
        });
    if let Some(name) = quoted.filter(|n| !n.is_empty() && n.chars().count() <= 20) {
        return Some(name);
    }
    // Hiragana is the script of particles and endings; a name is written in
    // katakana, kanji or letters.
    let hiragana = |c: char| ('\u{3041}'..='\u{309f}').contains(&c);
    let part_of_name = |c: char| c.is_alphanumeric() && !hiragana(c);
    let phrase = &s[at.clone()];
    let name = if phrase.starts_with(hiragana) {
        let before = &s[..at.start];
        let start = before
            .char_indices()
            .rev()
            .take_while(|&(_, c)| part_of_name(c))
            .last()
            .map_or(before.len(), |(i, _)| i);
        &before[start..]
    } else {
        let after = &s[at.end..];
        let end = after
            .char_indices()
            .find(|&(_, c)| !part_of_name(c) || "吧就呢啊".contains(c))
            .map_or(after.len(), |(i, _)| i);
        &after[..end]
    };
    (!name.is_empty()).then_some(name)
}

/// Whether a clause asks the agent to serve the speaker a certain way
/// ("answer me in …", "call me …"): such an instruction is personal, even
/// with "from now on".
pub(super) fn serves_speaker(s: &str) -> bool {
    let s = strip_ci(s, "please ").unwrap_or(s);
    // "always cc the on-call engineer" is how the agent works for everyone;
    // "always answer me briefly" how it serves the speaker.
    let about_speaker = first_person(s) || s.to_lowercase().contains("your ");
    personal(s).is_some_and(|c| {
        c.subject == ANSWER_IN_SUBJECT
            || c.subject == "name"
            || (c.kind == "preference" && about_speaker)
    })
}

/// What happens once ("I spent 740 EUR on a conference ticket", "I have a
/// meeting with the auditors today"): a speaker's one-off event serves the
/// question at hand and is no memory (README.md, "What the assistant
/// remembers"). A first-person clause with a verb of a one-off act — buying,
/// paying, booking — or a time that is only now (today, yesterday, this
/// morning), unless that time starts something ("from today").
pub fn transient(clause: &str) -> bool {
    // "From" before a time, in the languages that put it there as a word
    // ("od dziś", "fra i dag", "vanaf vandaag", "da oggi", "с сегодня").
    const STARTS: &[&str] = &[
        "from", "starting", "of", "since", "ab", "seit", "desde", "partir", "od", "fra", "från",
        "vanaf", "da", "dal", "с", "від", "z", "từ", "tu", "mulai", "sejak", "από", "απο", "من",
    ];
    // … or after it, where the language puts it there ("aaj se", "आज से").
    const STARTS_AFTER: &[&str] = &["se", "से"];
    let words = words_of(clause);
    // "We had a team lunch": the speaker's group's one-off is as passing as
    // their own ("we" is no speaker for personal memory, so only here).
    let ours = words.first().is_some_and(|w| {
        [
            "we", "we've", "wir", "nosotros", "nous", "nós", "noi", "wij",
        ]
        .contains(&w.as_str())
    });
    let act = words::find(Class::OneOff, &words).is_some()
        || words::holds_unspaced(Class::OneOff, clause);
    let now = || {
        words::find_all(Class::OnlyNow, &words)
            .into_iter()
            .any(|(i, len)| {
                let before = i > 0 && STARTS.contains(&words[i - 1].as_str());
                let after = words
                    .get(i + len)
                    .is_some_and(|w| STARTS_AFTER.contains(&w.as_str()));
                !(before || after)
            })
            || words::holds_unspaced(Class::OnlyNow, clause)
    };
    // Who did it is read only of a clause with a one-off in it (most have none).
    // "Jestem dzisiaj chory": the speaker's "I am" says who, as a pronoun does.
    let am =
        || words::find(Class::Am, &words).is_some() || words::holds_unspaced(Class::Am, clause);
    (act || now()) && (ours || first_person(clause) || am() || words::speakers_act(&words, clause))
}

/// Whether `sentence` opens with a time that is only now ("Today …", "Hôm
/// nay …", "今天…") and is the speaker's one-off as a whole: then so is each
/// of its clauses ("Hôm nay khách phòng 12 làm vỡ cái ấm đun nước, tôi đã
/// thu 90 MAD": the guest's clause is the day's, the speaker's its sequel).
pub(super) fn dated_today(sentence: &str) -> bool {
    let words = words_of(sentence);
    let opens = words::find_all(Class::OnlyNow, &words)
        .first()
        .is_some_and(|&(at, _)| at == 0)
        || words::holds_unspaced(
            Class::OnlyNow,
            &sentence.chars().take(3).collect::<String>(),
        );
    opens && transient(sentence)
}

/// Time zones as people name them, upper case: the zone a person keeps
/// their times in ("in JST, please", "저는 서울 시간(KST) 기준으로 일해요").
const TIME_ZONES: &[&str] = &[
    "UTC", "GMT", "CET", "CEST", "EET", "EEST", "WET", "WEST", "BST", "IST", "JST", "KST", "HKT",
    "SGT", "AEST", "AEDT", "ACST", "AWST", "NZST", "NZDT", "EST", "EDT", "CST", "CDT", "MST",
    "MDT", "PST", "PDT", "AKST", "HST", "MSK", "TRT", "BRT", "ART", "SAST", "WIB", "ICT", "PHT",
    "GST",
];

/// Words that ask when or what: "could you tell me when standup is in
/// CET?" asks a time, not a time zone to keep.
const ASKS_WHEN: &[&str] = &[
    "when",
    "what",
    "what's",
    "which",
    "wann",
    "welche",
    "quand",
    "quelle",
    "quel",
    "cuándo",
    "cuando",
    "qué",
    "quando",
    "quale",
    "que",
    "wanneer",
    "welke",
    "när",
    "vilken",
    "kiedy",
    "który",
    "która",
    "когда",
    "какой",
    "ne",
    "hangi",
    "いつ",
    "何時",
    "언제",
    "몇",
];

/// The time zone the speaker keeps their times in, said of themselves or
/// asked of the agent ("I'm on KST", "give me times in CET please",
/// "時間は日本時間（JST）で教えてもらえますか"): a preference for every
/// reply that states a time. A question asking a time in a zone is not.
pub(super) fn time_zone(s: &str) -> Option<Candidate> {
    let zone = s
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '+' || c == '-'))
        .find(|t| {
            // Two capitals open every zone: most words are read no further.
            let b = t.as_bytes();
            b.len() >= 3
                && b[0].is_ascii_uppercase()
                && b[1].is_ascii_uppercase()
                && TIME_ZONES.iter().any(|z| {
                    t.strip_prefix(z).is_some_and(|offset| {
                        offset.is_empty()
                            || (offset.starts_with(['+', '-'])
                                && offset[1..].chars().all(|c| c.is_ascii_digit() || c == ':'))
                    })
                })
        })?;
    let words = words_of(s);
    let asks_when = words.iter().any(|w| ASKS_WHEN.contains(&w.as_str()))
        || ASKS_WHEN.iter().any(|w| !w.is_ascii() && s.contains(w));
    let addressed = words::find(Class::Request, &words).is_some()
        || words::holds_unspaced(Class::Request, s)
        || words::find(Class::Courtesy, &words).is_some()
        || words::holds_unspaced(Class::Courtesy, s);
    let theirs = first_person(s) || with_the_speaker(s);
    // A statement about another's time ("the standup is at 9:00 CET") is
    // no preference: the speaker or a request must carry it.
    if asks_when || !(theirs || addressed) || for_everyone(s) || transient(s) {
        return None;
    }
    Some(personal_item(
        "preference",
        "time-zone",
        format!("Wants times in {zone}"),
    ))
}
