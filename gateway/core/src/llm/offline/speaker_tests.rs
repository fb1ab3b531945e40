//! The offline rules' unit tests for what a speaker says of themselves
//! beside something else (issue 46's fifth sitting): a fact before a
//! question, where they work and who manages them, a time zone, a form
//! "with me", a wish and its reason, replying to them for good.

use super::tests::one;
use super::*;

/// Whether each of `said` is read as the speaker's unit (`theirs`) or not.
fn assert_units(said: &[&str], theirs: bool) {
    for said in said {
        let c = label(said);
        let unit = c.as_ref().is_some_and(|c| c.subject == UNIT_SUBJECT);
        assert_eq!(unit, theirs, "{said}: {c:?}");
    }
}

/// Phrasings written for this test, none taken from a transcript: a fact
/// of the speaker's before a dash and a question is read as a statement,
/// and a dash inside a question or a full-width stop joins or ends as a
/// reader expects.
#[test]
fn a_fact_beside_a_question_is_its_own_clause() {
    assert_eq!(
        clauses("I'm on the billing team — where does the printer queue live?"),
        [
            "I'm on the billing team",
            "where does the printer queue live?"
        ]
    );
    assert_eq!(
        clauses("Is the plotter — the big one — free after lunch?").len(),
        1
    );
    assert_eq!(
        clauses("営業チームです。会議は何時ですか？資料はどこ？"),
        ["営業チームです。", "会議は何時ですか？", "資料はどこ？"]
    );
}

/// Phrasings written for this test: where a person works, said in the
/// first person — with the pronoun, with the verb alone where a language
/// drops it, after a one-word aside — is one subject with their team;
/// "I moved, my desk is …" says no workplace of "I moved", and "I'm the
/// office manager" claims a role.
#[test]
fn where_the_speaker_works_is_their_unit() {
    assert_units(
        &[
            "fyi I'm at the Harbour Street branch these days",
            "Trabajo en la sucursal de Triana",
            "Jestem w dziale zakupów",
            "Я, вообще-то, в отделе закупок",
            "btw I'm on the snowmaking crew this winter",
        ],
        true,
    );
    let desk = label("I moved, my desk is in room 3.14 now");
    assert_eq!(desk.map(|c| c.subject), Some("fact:desk".to_string()));
    let role = label("I'm the office manager");
    assert_eq!(
        role.map(|c| c.kind),
        Some(memory::policy::ROLE_CLAIM_KIND.to_string())
    );
    assert!(label("I keep backups in the office safe").is_none_or(|c| c.subject != UNIT_SUBJECT));
}

/// Phrasings written for this test: the speaker's manager, named, is a
/// fact about them on one subject; a manager named by no one's name, or
/// asked about, is not.
#[test]
fn the_speakers_manager_named_is_a_fact() {
    for said in [
        "my boss is Carla Mendes, fyi",
        "Mein Chef ist Jonas Weber",
        "Yöneticim Ayşe Kaya, izinlerimi o onaylıyor",
        "Mój kierownik to Tomasz Nowak",
    ] {
        let c = label(said);
        assert_eq!(
            c.as_ref().map(|c| c.subject.as_str()),
            Some("fact:manager"),
            "{said}: {c:?}"
        );
    }
    for said in ["my manager wants the report by noon", "who is my manager?"] {
        let c = label(said);
        assert!(
            c.as_ref().is_none_or(|c| c.subject != "fact:manager"),
            "{said}: {c:?}"
        );
    }
}

/// Phrasings written for this test: a time zone the speaker keeps, said
/// of themselves or asked of the agent, is a preference; a time asked in a
/// zone, or a zone in a statement about the team's work, is not.
#[test]
fn a_time_zone_the_speaker_keeps_is_a_preference() {
    for said in [
        "I work on CET",
        "Could you give me times in PST please?",
        "저는 한국 시간(KST)으로 일정을 봐요",
        "Bitte Zeiten für mich in UTC+2",
    ] {
        let c = label(said);
        assert_eq!(
            c.as_ref().map(|c| c.subject.as_str()),
            Some("time-zone"),
            "{said}: {c:?}"
        );
    }
    for said in [
        "Could you tell me when the standup is in CET?",
        "The standup is at 9:00 CET",
        "The EST office closes early",
    ] {
        let c = label(said);
        assert!(
            c.as_ref().is_none_or(|c| c.subject != "time-zone"),
            "{said}: {c:?}"
        );
    }
}

/// Phrasings written for this test: a form of the agent's right before
/// "with me", or after an elided article, is how the speaker is answered;
/// a thing named before "with me" is shared, a task.
#[test]
fn a_form_with_the_speaker_is_a_preference() {
    for said in [
        "Could you be more formal with me?",
        "Kun je wat korter zijn met mij?",
        "Pas d'emojis avec moi, merci",
    ] {
        let c = label(said);
        assert!(
            c.as_ref().is_some_and(|c| c.kind == "preference"),
            "{said}: {c:?}"
        );
    }
    for said in [
        "Can you share the short report with me?",
        "Could you send the formal letter with me in copy?",
    ] {
        let c = label(said);
        assert!(
            c.as_ref().is_none_or(|c| c.kind != "preference"),
            "{said}: {c:?}"
        );
    }
}

/// Phrasings written for this test: a wish and its reason are one
/// preference; a short sentence that only limits the statement before it
/// is part of that statement, and a limit after a comma is no preamble.
#[test]
fn a_statement_and_what_qualifies_it_are_one() {
    let v = extract("Could you keep it brief with me? Long replies tire me out");
    assert_eq!(v.len(), 1, "{v:?}");
    assert!(v[0].content.contains("tire me"), "{v:?}");
    assert_eq!(
        clauses("Lab 2 is for sterile work only. Not even for a quick coffee."),
        ["Lab 2 is for sterile work only — not even for a quick coffee"]
    );
    let c = one("Nobody else uses Lab 2, not even for 10 minutes");
    assert!(c.content.starts_with("Nobody else uses Lab 2"), "{c:?}");
    assert_eq!(
        clauses("Answer me in German. No emojis please.").len(),
        2,
        "a refusal is a request of its own"
    );
}

/// Phrasings written for this test: a name others call the speaker by, or
/// Dutch "zeg maar" before a name, is how they want to be called; "zeg
/// maar" inside a sentence ("so to speak") names no one.
#[test]
fn a_name_others_use_is_how_the_speaker_is_called() {
    for (said, kept) in [
        (
            "the whole team calls me Jojo, you can too",
            "Wants to be called Jojo",
        ),
        ("Zeg maar Wim, dat doet iedereen", "Wants to be called Wim"),
    ] {
        let c = label(said);
        assert_eq!(c.map(|c| c.content), Some(kept.to_string()), "{said}");
    }
    assert!(label("Ik werk, zeg maar, bij de gemeente").is_none_or(|c| c.subject != "name"));
}

/// Phrasings written for this test: replying to the speaker for good — the
/// speaker joined to the verb ("scrivimi"), a language the table does not
/// name — is a preference, never the team's rule; replying to others for
/// good is a rule.
#[test]
fn replying_to_the_speaker_for_good_is_theirs() {
    for said in [
        "D'ora in avanti scrivimi in modo semplice, grazie",
        "Háblame siempre de usted",
        "From now on, answer me in Basque",
    ] {
        let c = label(said);
        assert!(
            c.as_ref()
                .is_some_and(|c| c.channel == ItemChannel::Personal && c.kind == "preference"),
            "{said}: {c:?}"
        );
    }
    let c = label("From now on reply to suppliers in Basque");
    assert!(c.is_some_and(|c| c.channel == ItemChannel::Operational));
}

/// Phrasings written for this test: the speaker moved by others to a
/// workplace is theirs; a thing the speaker moved is not.
#[test]
fn the_speaker_moved_to_a_workplace_is_their_unit() {
    assert_units(
        &[
            "Heads up, they've reassigned me to the Harbour Road clinic",
            "Me trasladaron a la sucursal de Cádiz",
        ],
        true,
    );
    assert_units(
        &[
            "I moved the meeting to the office",
            "They sent me the rota for the depot",
        ],
        false,
    );
}

/// Phrasings written for this test, none taken from a transcript: what a
/// speaker says they are, in languages whose "I am" the lexicon knows —
/// before what they are, after it, or with no verb at all — is a fact of
/// theirs; said of today it is a one-off, and said for everyone it is no
/// fact of theirs.
#[test]
fn what_the_speaker_says_they_are_is_theirs_in_any_language() {
    for said in [
        "Übrigens, ich bin Veganerin",
        "btw je suis allergique aux arachides",
        "Eu sou canhoto",
        "Olen kasvissyöjä",
        "Saya vegetarian",
        "Jestem uczulony na orzechy",
        "Laktózérzékeny vagyok",
        "Ik ben coeliakiepatiënt",
    ] {
        let c = label(said);
        assert!(
            c.as_ref()
                .is_some_and(|c| c.channel == ItemChannel::Personal
                    && c.kind == memory::policy::IDENTITY_KIND),
            "{said}: {c:?}"
        );
    }
    for said in [
        "Jestem dzisiaj chory",
        "Esta semana estoy en recepción",
        "Ujel mi autobus, takže jsem přišla pozdě",
        "je suis malade aujourd'hui",
        "Ich bin heute im Homeoffice",
    ] {
        let c = label(said);
        assert!(c.is_none(), "{said}: {c:?}");
    }
    assert!(said_of_self("Heads up everyone, I'm told the lift is out").is_none());
    assert!(said_of_self("Ich bin").is_none());
}

/// Phrasings written for this test: where the speaker is, named by a
/// place's code rather than a word for a team ("zone B7", "bay K4"), is
/// their unit — said with a verb of being, or of being moved there "from
/// today" — so a move is asked as a change of it; a code in the team's
/// work or a thing moved is not.
#[test]
fn a_place_named_by_its_code_is_the_speakers_unit() {
    assert_units(
        &[
            "Jestem teraz w strefie B7",
            "They moved me to bay K4 from today",
            "Ich bin ab heute in Halle H2",
            "Od dziś przenieśli mnie do strefy A2",
        ],
        true,
    );
    assert_units(
        &[
            "The Q3 report is in folder R2",
            "I moved the meeting to room B2",
        ],
        false,
    );
}

/// A place named by its name, not a code ("the Rose Pavilion", "Hafen
/// Nord"), is the speaker's unit when they are there or were moved there,
/// so a move is asked as a change; a day, a city or a thing moved is not.
/// Each phrased for this test.
#[test]
fn a_place_named_by_its_name_is_the_speakers_unit() {
    assert_units(
        &[
            "I work at the Rose Pavilion",
            "They've transferred me to the Hall of Mirrors",
            "Ich bin jetzt fest im Lager Hafen Nord eingeteilt",
            "Od dziś przenieśli mnie do Sali Królewskiej",
        ],
        true,
    );
    assert_units(
        &[
            "I'm off on Monday",
            "I moved the boxes to the Rose Pavilion",
            "I'm in Berlin",
        ],
        false,
    );
}

/// Phrasings written for this test: a possessive after one short opening
/// word opens a fact of the speaker's as it does at the start; asked, it is
/// a question. Croatian and Finnish wishes about replies are preferences,
/// and the verb-second "I am" of the Nordic and Germanic rows is read.
#[test]
fn an_opening_word_a_verb_second_and_a_croatian_wish_are_read() {
    let van = label("fyi my parking spot is P-214 now").expect("a fact");
    assert_eq!(van.subject, "fact:parking", "{van:?}");
    assert!(label("btw is my parking spot P-214?").is_none());
    for wish in [
        "Više volim kratke odgovore, bez puno priče",
        "Haluaisin vastaukset ranskalaisin viivoin",
    ] {
        let c = label(wish).expect("a preference");
        assert_eq!(c.kind, "preference", "{wish}: {c:?}");
    }
    for said in [
        "Ab heute bin ich Vegetarierin",
        "Fra i dag er jeg vegetarianer",
    ] {
        assert!(label(said).is_some(), "{said}");
    }
}

/// Where a language drops its pronouns, the verb says who: a clause naming
/// no one else is the speaker's; one naming someone is not. Phrased for
/// this test.
#[test]
fn a_statement_in_a_language_that_drops_its_pronouns_is_the_speakers_unless_it_names_another() {
    for clause in [
        "Per la cronaca: sono vegetariana da anni, niente carne per favore.",
        "Para que conste: soy diabético y necesito comer a mis horas.",
        "Od lutego pracuję w magazynie B, na nocnej zmianie.",
        "Pro pořádek: mám alergii na arašídy.",
        // The lexicon's "I am" where the language drops its pronoun.
        "Dla porządku: jestem uczulona na orzechy.",
        // A place named beside a verb only the speaker says of themselves.
        "Od příštího týdne jsem přeložená do skladu Nová Ves.",
    ] {
        assert!(of_themselves(clause), "{clause}");
    }
    for clause in [
        "Per la cronaca: Marta è vegetariana da anni.",
        "Per la cronaca: Marta e Luca sono in ferie.",
        "Para que conste: Julián es diabético.",
        // An event dropping its pronoun is no one's fact.
        "Včera večer se v dílně rozbil kompresor, celá směna stála.",
        "Esta mañana llegó un camión nuevo al almacén.",
        // Not a language that drops its pronouns, and no pronoun.
        "For the record: vegetarian for years now.",
    ] {
        assert!(!of_themselves(clause), "{clause}");
    }
}

/// Asking to be reminded or told what is kept is a request, with or without
/// its question mark: nothing to keep. Phrased for this test.
#[test]
fn asking_to_be_reminded_is_a_request_in_any_language() {
    for said in [
        "Przypomnij mi, o której mam jutro zmianę.",
        "Recuérdame el código del almacén, que siempre lo olvido",
        "Erinnere mich an meine Schicht morgen",
        "Напомни мне мой номер шкафчика",
        "Ricordami il mio turno di domani",
        "明日のシフトの時間を教えて",
        "提醒我明天几点上班",
    ] {
        assert!(label(said).is_none() && asks(said), "{said}");
    }
    // A statement that opens alike is not asked.
    assert!(!asks("Dimensions of my locker are 40 by 60."));
}

/// A reason after a reply language asked for is not a second wish; a form
/// said after it is. Phrased for this test.
#[test]
fn a_reason_after_a_reply_language_is_no_second_wish() {
    let items = extract(
        "Podes responder-me em inglês a partir de agora? O meu chefe novo não lê português e eu mando-lhe as tuas respostas.",
    );
    assert_eq!(items.len(), 1, "{items:?}");
    assert_eq!(items[0].subject, ANSWER_IN_SUBJECT);
    let items = extract("Answer me in English from now on. I like your answers short.");
    assert_eq!(items.len(), 2, "{items:?}");
}
