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

/// "I work from Lisbon" as said of the speaker: "Works from Lisbon".
pub(super) const FIRST_PERSON_VERBS: &[(&str, &str)] = &[
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
    for (opening, says) in FIRST_PERSON_VERBS {
        if let Some(rest) = strip_ci(s, opening) {
            let said = format!("{says}{}", clean(rest));
            // The unit they work in is one subject, whatever its name.
            if names_a_unit(rest) {
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
/// opening the statement or following a comma ("My desk is in room 4.12",
/// "I moved, my desk is in room 2.07 now"): a fact about them, on the
/// subject of the thing they named, so a new value conflicts with the old
/// and is asked as a contradiction. Kept from the possessive on, as said.
pub(super) fn possessed(s: &str) -> Option<Candidate> {
    let from = std::iter::once(s)
        .chain(s.match_indices(", ").map(|(i, sep)| &s[i + sep.len()..]))
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
    // Courtesy between the phrase and the name ("nenn mich bitte Kalle").
    let skip = words[at + len..]
        .iter()
        .take_while(|w| words::is_word(Class::Courtesy, w) || words::is_word(Class::Request, w))
        .count();
    let name: Vec<&(usize, &str)> = tokens[at + len + skip..]
        .iter()
        .take(3)
        .take_while(|(_, t)| t.chars().next().is_some_and(char::is_uppercase))
        .collect();
    let (first, _) = name.first()?;
    let (last, t) = name.last()?;
    let end = last + t.len();
    Some(s[*first..end].trim_end_matches(['.', ',', '!', '?', ';', ':']))
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
    const STARTS: &[&str] = &[
        "from", "starting", "of", "since", "ab", "seit", "desde", "partir",
    ];
    let words = words_of(clause);
    // "We had a team lunch": the speaker's group's one-off is as passing as
    // their own ("we" is no speaker for personal memory, so only here).
    let ours = words.first().is_some_and(|w| {
        [
            "we", "we've", "wir", "nosotros", "nous", "nós", "noi", "wij",
        ]
        .contains(&w.as_str())
    });
    if !first_person(clause) && !ours && !words::speakers_act(&words, clause) {
        return false;
    }
    let act = words::find(Class::OneOff, &words).is_some()
        || words::holds_unspaced(Class::OneOff, clause);
    let now = words::find_all(Class::OnlyNow, &words)
        .into_iter()
        .any(|(i, _)| !(i > 0 && STARTS.contains(&words[i - 1].as_str())))
        || words::holds_unspaced(Class::OnlyNow, clause);
    act || now
}

/// The units a person belongs to at work, in the languages the rules know:
/// a team, a desk, a beat, a department. A person is in one at a time, so
/// a new one conflicts with the old and is asked as a contradiction.
const UNITS: &[&str] = &[
    "team",
    "desk",
    "beat",
    "department",
    "squad",
    "unit",
    "group",
    "abteilung",
    "gruppe",
    "ressort",
    "equipo",
    "departamento",
    "équipe",
    "equipe",
    "service",
    "rubrique",
    "equipa",
    "editoria",
    "squadra",
    "reparto",
    "redazione",
    "afdeling",
    "avdelning",
    "avdeling",
    "zespół",
    "zespole",
    "dział",
    "dziale",
    "команда",
    "команде",
    "команду",
    "отдел",
    "отделе",
    "ekip",
    "ekibi",
    "ekibinde",
    "ekibine",
    "takım",
    "takımı",
    "departman",
];

/// Where a person works: one place at a time, like a team. Nouns only:
/// "store", "plant", German "laden" are verbs as often. Said with a verb of
/// being or working (`WORKING`): "I keep backups in the office safe" names
/// a place, not theirs.
const WORKPLACES: &[&str] = &[
    "shop",
    "branch",
    "office",
    "site",
    "depot",
    "ward",
    "clinic",
    "warehouse",
    "studio",
    "campus",
    "filiale",
    "standort",
    "büro",
    "tienda",
    "sucursal",
    "oficina",
    "sede",
    "boutique",
    "agence",
    "bureau",
    "magasin",
    "negozio",
    "ufficio",
    "loja",
    "escritório",
    "filial",
    "winkel",
    "kantoor",
    "vestiging",
    "butik",
    "kontor",
    "kontoret",
    "sklep",
    "sklepie",
    "biuro",
    "biurze",
    "oddział",
    "oddziale",
    "магазин",
    "магазине",
    "офис",
    "офисе",
    "филиал",
    "филиале",
    "şube",
    "şubede",
    "ofis",
    "ofiste",
    "mağaza",
    "mağazada",
];

/// "I am", "I work" where a language drops the pronoun ("Jestem w zespole
/// …", "Trabajo en la tienda de …"): the verb says the speaker is the subject.
const BEING: &[&str] = &[
    "jestem",
    "pracuję",
    "pracuje",
    "estoy",
    "soy",
    "trabajo",
    "sono",
    "lavoro",
    "estou",
    "sou",
    "trabalho",
    "работаю",
    "çalışıyorum",
];

/// Verbs of moving a person to another place of work, as said of the past
/// ("transferred me", "mich versetzt", "me trasladaron", "перевели меня").
const MOVING: &[&str] = &[
    "transferred",
    "moved",
    "relocated",
    "reassigned",
    "sent",
    "versetzt",
    "verlegt",
    "verplaatst",
    "overgeplaatst",
    "trasladado",
    "trasladaron",
    "trasladó",
    "muté",
    "mutée",
    "transféré",
    "transférée",
    "trasferito",
    "trasferita",
    "spostato",
    "spostata",
    "transferiram",
    "mudaram",
    "przenieśli",
    "przeniesiono",
    "перевели",
    "пересадили",
    "flyttat",
    "flyttade",
];

/// The subject of the speaker's unit at work: one for all its names.
pub(super) const UNIT_SUBJECT: &str = "fact:unit";

/// Whether `s` names a unit a person belongs to.
pub(super) fn names_a_unit(s: &str) -> bool {
    words_of(s)
        .iter()
        .any(|w| UNITS.contains(&w.as_str()) || WORKPLACES.contains(&w.as_str()))
}

/// Verbs of being or working somewhere, right after the speaker ("I'm at
/// the Valencia shop", "I moved to the Madrid shop", "ich bin in der
/// Filiale Mitte"); in a language that drops the pronoun the verb is the
/// speaker (`BEING`).
const WORKING: &[&str] = &[
    "am",
    "work",
    "moved",
    "transferred",
    "switched",
    "joined",
    "started",
    "sit",
    "bin",
    "arbeite",
    "sitze",
    "suis",
    "travaille",
    "ben",
    "werk",
    "zit",
    "är",
    "jobbar",
    "arbetar",
    "sitter",
    "estoy",
    "trabajo",
    "sono",
    "lavoro",
    "estou",
    "trabalho",
    "jestem",
    "pracuję",
];

/// Whether the workplace `part` names is the speaker's: a team is, a place
/// is when a verb of being or working follows the speaker.
fn works_there(part: &str) -> bool {
    let words = words_of(&part.replace('’', "'"));
    if words.iter().any(|w| UNITS.contains(&w.as_str())) {
        return true;
    }
    // A verb of working or moving with a thing after it ("I moved the
    // meeting to the office") moves the thing, not the speaker.
    let the_speakers = |i: usize| {
        words
            .get(i + 1)
            .is_none_or(|next| !ARTICLES.contains(&next.as_str()))
    };
    // Moved by others: the speaker the verb's object ("me trasladaron a
    // …"), not given a thing ("they sent me the rota").
    let moved = words
        .iter()
        .take(3)
        .enumerate()
        .any(|(i, w)| OBJECT_PRONOUNS.contains(&w.as_str()) && the_speakers(i));
    words.iter().take(3).enumerate().any(|(i, w)| {
        (WORKING.contains(&w.as_str()) && the_speakers(i))
            || (MOVING.contains(&w.as_str()) && moved)
            || BEING.contains(&w.as_str())
            || w == "i'm"
    })
}

/// The speaker's words for another as the object ("update on me", "tell
/// me"): no subject of what follows.
const OBJECT_PRONOUNS: &[&str] = &[
    "me", "mir", "mich", "mi", "moi", "mij", "mig", "meg", "mnie", "мне", "меня", "bana", "beni",
];

/// The unit the speaker says they are in, joined or moved to ("By the way
/// I'm on the packaging design team", "update on me: I moved over to the
/// motion team last week", "Just so you know, I cover the courts beat"):
/// the speaker the subject among the first words (after a short head
/// before a colon), a unit named before the next comma. Kept from the
/// speaker on, as said, on one subject for every unit.
pub(super) fn belongs(s: &str) -> Option<Candidate> {
    let s = match s.split_once(": ") {
        Some((head, rest)) if head.split_whitespace().count() <= 5 => rest,
        _ => s,
    };
    let subject = |t: &str| {
        let w = t
            .trim_matches(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’'))
            .to_lowercase()
            .replace('’', "'");
        BEING.contains(&w.as_str())
            || words::is_word(Class::Speaker, &w)
                && !words::is_word(Class::Mine, &w)
                && !OBJECT_PRONOUNS.contains(&w.as_str())
    };
    let tokens: Vec<&str> = s.split_whitespace().take(8).collect();
    let lower = |t: &str| {
        t.trim_matches(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’'))
            .to_lowercase()
            .replace('’', "'")
    };
    // Or moved by others ("they've transferred me to the Riverside depot",
    // "mich haben sie in die Filiale Nord versetzt"): the speaker the object
    // beside a verb of moving; kept from the clause that says so.
    let moved = || {
        tokens.iter().enumerate().find_map(|(i, t)| {
            let object = OBJECT_PRONOUNS.contains(&lower(t).as_str());
            let near = |j: usize| {
                tokens
                    .get(j)
                    .is_some_and(|v| MOVING.contains(&lower(v).as_str()))
            };
            let by_verb = object && (near(i + 1) || (i > 0 && near(i - 1)));
            by_verb.then(|| {
                let start = if i > 0 && near(i - 1) { i - 1 } else { i };
                // The words before the verb in its clause: "they've".
                s[..tokens[start].as_ptr() as usize - s.as_ptr() as usize]
                    .rfind(", ")
                    .map_or(0, |c| c + 2)
            })
        })
    };
    let at = tokens
        .iter()
        .take(6)
        .find(|t| subject(t))
        .map(|t| t.as_ptr() as usize - s.as_ptr() as usize)
        .or_else(moved)?;
    let from = &s[at..];
    // Up to the next comma, past a one-word aside ("Я, кстати, в команде
    // …"): "I moved, my desk is in room 2.07" says no unit of "I moved".
    let mut end = from.len();
    let mut segment = 0;
    for (i, sep) in from.match_indices(", ") {
        if from[segment..i].split_whitespace().count() > 1 {
            end = i;
            break;
        }
        segment = i + sep.len();
    }
    let part = clean(&from[..end]);
    if !names_a_unit(&part)
        || !works_there(&part)
        || transient(&part)
        || part.ends_with(['?', '？'])
    {
        return None;
    }
    Some(personal_item("fact", UNIT_SUBJECT, capitalise(&part)))
}

/// Who a person reports to, as named at work, in the languages the rules
/// know; Turkish says "my" in the word ("müdürüm": my manager).
const MANAGERS: &[&str] = &[
    "manager",
    "manager's",
    "boss",
    "boss's",
    "supervisor",
    "lead",
    "chef",
    "chefin",
    "vorgesetzter",
    "vorgesetzte",
    "teamleiter",
    "teamleiterin",
    "jefe",
    "jefa",
    "responsable",
    "supérieur",
    "supérieure",
    "gestor",
    "gestora",
    "chefe",
    "gerente",
    "capo",
    "responsabile",
    "leidinggevende",
    "baas",
    "teamleider",
    "kierownik",
    "kierowniczka",
    "szef",
    "szefowa",
    "przełożony",
    "przełożona",
    "начальник",
    "начальница",
    "руководитель",
    "менеджер",
    "müdür",
    "yönetici",
    "şef",
    "amir",
    "chefen",
    "närmaste",
];
const MANAGERS_THEIRS: &[&str] = &["müdürüm", "yöneticim", "şefim", "amirim"];
const MANAGERS_UNSPACED: &[&str] = &["上司", "经理", "領導", "领导", "상사", "팀장님", "매니저"];

/// The speaker's manager, named ("my manager's Priya Raman btw", "mein
/// Chef ist Jonas Weber", "müdürüm Hannah Vogt"): a lasting fact about
/// them, one subject whoever it names, so a new manager is asked as a
/// change. A possessive then a word for a manager, then a capitalised name;
/// where a language writes no spaces, the word with the speaker's.
pub(super) fn managed_by(s: &str) -> Option<Candidate> {
    const SUBJECT: &str = "fact:manager";
    if s.trim_end().ends_with(['?', '？']) {
        return None;
    }
    if !s.is_ascii() && MANAGERS_UNSPACED.iter().any(|m| s.contains(m)) {
        let theirs =
            words::holds_unspaced(Class::Speaker, s) || words::holds_unspaced(Class::Mine, s);
        return theirs.then(|| personal_item("fact", SUBJECT, clean(s)));
    }
    let tokens: Vec<&str> = s.split_whitespace().collect();
    let word = |t: &str| {
        t.trim_matches(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’'))
            .to_lowercase()
            .replace('’', "'")
    };
    let at = tokens.iter().enumerate().position(|(i, t)| {
        let w = word(t);
        MANAGERS_THEIRS.contains(&w.as_str())
            || (MANAGERS.contains(&w.as_str())
                && i > 0
                && (words::is_word(Class::Mine, &word(tokens[i - 1]))
                    || words::is_word(Class::Speaker, &word(tokens[i - 1]))))
    })?;
    // A name follows within five words ("A minha chefe direta é a Graça
    // Teixeira"): capitalised, not a sentence's start.
    let named = tokens[at + 1..]
        .iter()
        .take(5)
        .any(|t| t.chars().next().is_some_and(char::is_uppercase));
    if !named {
        return None;
    }
    // Kept from the possessive on, up to the next comma.
    let first = if MANAGERS_THEIRS.contains(&word(tokens[at]).as_str()) {
        tokens[at]
    } else {
        tokens[at - 1]
    };
    let said = &s[first.as_ptr() as usize - s.as_ptr() as usize..];
    let said = said.split(", ").next().unwrap_or(said);
    Some(personal_item("fact", SUBJECT, capitalise(&clean(said))))
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
