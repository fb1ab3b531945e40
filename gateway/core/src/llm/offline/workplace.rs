//! Where the speaker works and who manages them: a team, a shop, a
//! depot, said of themselves or of being moved there, and their manager
//! named. Facts on one subject each, so a change is asked as one.

use super::*;

/// The units a person belongs to at work, in the languages the rules know:
/// a team, a desk, a beat, a department. A person is in one at a time, so
/// a new one conflicts with the old and is asked as a contradiction.
const UNITS: &[&str] = &[
    "team",
    "crew",
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

/// Whether `s` names a place by its code, letters and digits together ("zone
/// C3", "bay HB-1", "kennel K7"): where a person is, said with a verb of
/// being or working, whatever the language calls the place.
pub(super) fn names_a_code(s: &str) -> bool {
    s.split(|c: char| c.is_whitespace() || matches!(c, '(' | ')' | ',' | '.' | ';' | '!'))
        .any(|w| {
            (2..=8).contains(&w.len())
                && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                && w.chars().any(|c| c.is_ascii_uppercase())
                && w.chars().any(|c| c.is_ascii_digit())
        })
}

/// Words that put what follows in a place, in the languages the rules know
/// ("in", "at", "to", "from", "do", "w", "nach", "till").
const LOCATIVES: &[&str] = &[
    "in", "at", "to", "on", "into", "from", "im", "am", "zum", "zur", "ins", "nach", "bei", "à",
    "au", "aux", "dans", "en", "a", "al", "nel", "nella", "alla", "em", "no", "na", "para", "bij",
    "naar", "op", "w", "we", "do", "z", "ze", "i", "på", "till", "til", "fra", "från", "v", "ve",
    "в", "на", "у", "з", "da", "dal", "del", "de", "van", "uit", "aus", "vom",
];

/// Whether `s` names a place by its name after a word of place (past an
/// article): two capitalised words together, or joined by "of" ("do Turner
/// Gallery", "at the Hall of Clocks", "auf der MS Nordlys"), so one
/// capitalised word ("on Monday", "in Berlin") is no place of work. Said
/// with a verb of being, working or being moved (`works_there`), it is
/// where the speaker works, whatever the place is called.
pub(super) fn names_a_place(s: &str) -> bool {
    const ARTICLE: &[&str] = &[
        "the", "der", "die", "das", "la", "le", "il", "el", "het", "de",
    ];
    const OF: &[&str] = &["of", "de", "di", "da", "do", "du", "der", "van", "von"];
    let tokens: Vec<&str> = s.split_whitespace().collect();
    let capital = |i: usize| {
        tokens.get(i).is_some_and(|t| {
            let t = t.trim_matches(|c: char| !c.is_alphanumeric());
            t.chars().next().is_some_and(char::is_uppercase) && t != "I"
        })
    };
    let is = |i: usize, list: &[&str]| {
        tokens
            .get(i)
            .is_some_and(|t| list.contains(&as_compared(t).as_str()))
    };
    (0..tokens.len()).any(|i| {
        let at = if is(i + 1, ARTICLE) { i + 2 } else { i + 1 };
        is(i, LOCATIVES)
            && tokens[i] != "I"
            && capital(at)
            && (capital(at + 1) || (is(at + 1, OF) && capital(at + 2)))
    })
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
    // Among the first words, after a time said first at most ("od dziś
    // przenieśli mnie …").
    const FIRST: usize = 5;
    let moved = words
        .iter()
        .take(FIRST)
        .enumerate()
        .any(|(i, w)| OBJECT_PRONOUNS.contains(&w.as_str()) && the_speakers(i));
    words.iter().take(FIRST).enumerate().any(|(i, w)| {
        (WORKING.contains(&w.as_str()) && the_speakers(i))
            || (MOVING.contains(&w.as_str()) && moved)
            || BEING.contains(&w.as_str())
            || w == "i'm"
    })
}

/// A token as the rules compare it: lower case, the punctuation around it
/// dropped, ’ read as '.
fn as_compared(token: &str) -> String {
    token
        .trim_matches(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’'))
        .to_lowercase()
        .replace('’', "'")
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
        let w = as_compared(t);
        BEING.contains(&w.as_str())
            || words::is_word(Class::Speaker, &w)
                && !words::is_word(Class::Mine, &w)
                && !OBJECT_PRONOUNS.contains(&w.as_str())
    };
    let tokens: Vec<&str> = s.split_whitespace().take(8).collect();
    // Or moved by others ("they've transferred me to the Riverside depot",
    // "mich haben sie in die Filiale Nord versetzt"): the speaker the object
    // beside a verb of moving; kept from the clause that says so.
    let moved = || {
        tokens.iter().enumerate().find_map(|(i, t)| {
            let near = |j: usize| {
                tokens
                    .get(j)
                    .is_some_and(|v| MOVING.contains(&as_compared(v).as_str()))
            };
            let start = if i > 0 && near(i - 1) { i - 1 } else { i };
            let by_verb =
                OBJECT_PRONOUNS.contains(&as_compared(t).as_str()) && (start < i || near(i + 1));
            // Kept from the words before the verb in its clause: "they've".
            by_verb.then(|| {
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
    if !(names_a_unit(&part) || names_a_code(&part) || names_a_place(&part))
        || !works_there(&part)
        || transient(&part)
        || part.ends_with(QUESTION_MARKS)
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
    if ends_asking(s) {
        return None;
    }
    if !s.is_ascii() && MANAGERS_UNSPACED.iter().any(|m| s.contains(m)) {
        let theirs =
            words::holds_unspaced(Class::Speaker, s) || words::holds_unspaced(Class::Mine, s);
        return theirs.then(|| personal_item("fact", SUBJECT, clean(s)));
    }
    let tokens: Vec<&str> = s.split_whitespace().collect();
    let at = (0..tokens.len()).find(|&i| {
        let w = as_compared(tokens[i]);
        MANAGERS_THEIRS.contains(&w.as_str())
            || (MANAGERS.contains(&w.as_str())
                && i > 0
                && (words::is_word(Class::Mine, &as_compared(tokens[i - 1]))
                    || words::is_word(Class::Speaker, &as_compared(tokens[i - 1]))))
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
    let first = if MANAGERS_THEIRS.contains(&as_compared(tokens[at]).as_str()) {
        tokens[at]
    } else {
        tokens[at - 1]
    };
    let said = &s[first.as_ptr() as usize - s.as_ptr() as usize..];
    let said = said.split(", ").next().unwrap_or(said);
    Some(personal_item("fact", SUBJECT, capitalise(&clean(said))))
}
