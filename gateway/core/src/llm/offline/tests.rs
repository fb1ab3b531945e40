//! The offline rules' unit tests: what each rule makes of a statement, and the
//! answers from memory.

use super::respond::*;
use super::*;

/// Phrasings written for this test, none taken from a transcript: a
/// preference said, not asked — a thing refused with the speaker, or
/// the speaker naming the agent's replies — is the speaker's to keep;
/// a task with the speaker, a one-off and the team's replies are not.
#[test]
fn a_preference_stated_rather_than_asked_is_personal() {
    for said in [
        "No small talk with me",
        "Sin emojis conmigo",
        "Keine Floskeln mit mir",
        "I find bullet-point answers easier to read",
        "Mi piacciono le risposte brevi",
    ] {
        let c = label(said);
        assert!(
            c.as_ref()
                .is_some_and(|c| c.channel == ItemChannel::Personal && c.kind == "preference"),
            "{said}: {c:?}"
        );
    }
    for said in [
        "Share the quarterly deck with me",
        "The support team answers tickets in #help",
        "I replied to the auditors this morning",
    ] {
        let c = label(said);
        assert!(
            c.as_ref().is_none_or(|c| c.kind != "preference"),
            "{said}: {c:?}"
        );
    }
}

/// Phrasings written for this test, none taken from a transcript: a
/// title's period ends no sentence, and "<verb> me as <Name>" names how
/// the speaker is addressed.
#[test]
fn a_name_with_a_title_is_how_the_speaker_is_addressed() {
    for (said, kept) in [
        (
            "Would you address me as Prof. Lindqvist going forward?",
            "Wants to be called Prof. Lindqvist",
        ),
        (
            "Can you refer to me as Ms. Okafor from now on?",
            "Wants to be called Ms. Okafor",
        ),
        (
            "Please always refer to me as Mme. Dubois",
            "Wants to be called Mme. Dubois",
        ),
    ] {
        let c = one(said);
        assert_eq!(
            (c.subject.as_str(), c.content.as_str()),
            ("name", kept),
            "{said}"
        );
    }
    // A lower-case "as …" names no one.
    let c = one("Could you treat me as a beginner from now on?");
    assert_ne!(c.subject, "name", "{c:?}");
    assert_eq!(
        sentences("Ask Dr. Alves. He knows."),
        ["Ask Dr. Alves.", "He knows."]
    );
}

/// Written for this test: a note naming another thing of the kind asked
/// about is a neighbour; one sharing the thing itself answers.
#[test]
fn a_note_on_another_thing_of_the_kind_asked_is_a_neighbour() {
    let note = "Visitor badges are printed at the front desk.";
    assert!(!another_of_its_kind(
        &token_sequence("Where are parking badges printed?"),
        note
    ));
    assert!(another_of_its_kind(
        &token_sequence("Who hands out parking badges?"),
        note
    ));
    assert!(!another_of_its_kind(
        &token_sequence("Who hands out visitor badges?"),
        note
    ));
    assert!(!another_of_its_kind(
        &token_sequence("Who hands out the badges?"),
        note
    ));
    assert!(!another_of_its_kind(
        &token_sequence("How do I connect to the VPN?"),
        "The VPN endpoint is vpn.example.com."
    ));
    // Asked as a kind of shift, kept naming a person by it.
    let lead = "Claims above 150 EUR are approved by your shift lead.";
    assert!(another_of_its_kind(
        &token_sequence("How much extra do we get on night shifts?"),
        lead
    ));
    // A number or a name is the thing itself, wherever it stands.
    assert!(!another_of_its_kind(
        &token_sequence("Boots for exactly 150 €, who approves?"),
        "Claims up to 150 EUR are approved by your shift lead."
    ));
    assert!(!another_of_its_kind(
        &token_sequence("Who approves overtime?"),
        "Overtime requests go to Dana."
    ));
}

/// A note's words are read only where they can share a word with the
/// message: the answer is what reading every word gives.
#[test]
fn a_neighbour_is_found_whichever_words_of_the_note_are_read() {
    let every_word = |asked: &[Option<String>], note: &str| {
        let kept = token_sequence(note);
        let mut shared: Vec<&String> = asked
            .iter()
            .flatten()
            .filter(|t| kept.iter().flatten().any(|k| k == *t))
            .collect();
        shared.dedup();
        let [word] = shared.as_slice() else {
            return false;
        };
        let before = |seq: &[Option<String>]| {
            seq.windows(2)
                .find(|pair| pair[1].as_ref() == Some(*word))
                .and_then(|pair| pair[0].clone())
        };
        let at = (1..kept.len()).find(|&i| kept[i].as_ref() == Some(*word));
        let after_asked = asked
            .windows(2)
            .find(|pair| pair[0].as_ref() == Some(*word))
            .and_then(|pair| pair[1].clone());
        let after_kept = at.and_then(|i| kept.get(i + 1).cloned().flatten());
        match (before(asked), before(&kept)) {
            (Some(a), Some(b)) => a != b,
            (Some(_), None) => {
                let written = at
                    .and_then(|i| note.split_whitespace().nth(i))
                    .unwrap_or("");
                let common = written
                    .trim_matches(|c: char| !c.is_alphanumeric())
                    .chars()
                    .all(|c| c.is_alphabetic() && c.is_lowercase());
                common && after_kept.is_some() && after_kept != after_asked
            }
            _ => false,
        }
    };
    let notes = [
        "Visitor badges are printed at the front desk.",
        "The kakaka kaqumi report uses vikaka_0",
        "Laptop requests go to #it-hardware; monitor requests to #it-desk.",
        "db-1.example.com backs the orders report, see example_orders.",
        "Los pedidos de monitores van a #it-desk (monitor requests).",
        "Ärger mit dem Drucker: Druckerfragen gehen an #facilities.",
        "日报使用 example_orders 表, the daily report too.",
        "Bob's parking badges: ask Bob's team, a/badges or x-badges.",
        "requests requests: printer requests go to #facilities",
        "Claims above 150 EUR are approved by your shift lead.",
        "Night shifts start at 22:00.",
        "Claims up to 150 EUR need no sign-off; bread goes to the Tafel food bank.",
    ];
    let asked = [
        "Who hands out parking badges?",
        "Where do monitor requests go?",
        "Produce the mikaka kaqumi report (load 3x9)",
        "which orders table?",
        "Wer kümmert sich um Ärger mit dem Scanner?",
        "今天的日报 report?",
        "Where do coffee requests go?",
        "How much extra per hour on night shifts?",
        "Who is my shift lead?",
        "Boots for exactly 150 € — who signs?",
        "Kann das Brot zur Tafel?",
    ];
    for q in asked {
        let seq = token_sequence(q);
        for note in notes {
            assert_eq!(
                another_of_its_kind(&seq, note),
                every_word(&seq, note),
                "{q:?} / {note:?}"
            );
        }
    }
}

/// Phrasings written for this test: leave asked ("is it ok if you …") for
/// every reply is a standing request; a one-off favour is not.
#[test]
fn asking_leave_to_change_every_reply_is_a_preference() {
    for (said, kept) in [
        (
            "Is it ok if you make your responses a bit shorter?",
            "Wants you to make your responses a bit shorter",
        ),
        (
            "Would it be possible to number your answers for me?",
            "Wants you to number your answers for me",
        ),
    ] {
        let c = one(said);
        assert_eq!(c.channel, ItemChannel::Personal, "{said}");
        assert_eq!(c.content, kept, "{said}");
    }
    for once in [
        "Is it ok if you book a room for me?",
        "Would it be possible to send me the survey answers?",
    ] {
        assert!(asks(once), "{once}");
        assert!(statements(once).is_empty(), "{once}");
    }
}

/// Phrasings written for this test: a standing reply language in every
/// language of the yes/no table the rules had no words for.
#[test]
fn a_reply_language_asked_for_good_in_the_tables_other_languages() {
    for (said, lang) in [
        ("Artık bana Almanca cevap ver", "Almanca"),
        ("Od teraz odpisuj mi po angielsku", "Angielsku"),
        ("Впредь пиши мне по-немецки", "Немецки"),
        ("Skriv alltid till mig på engelska", "Engelska"),
        ("以后请用德语回复我", "德语"),
        ("これからはフランス語で返信してください", "フランス語"),
    ] {
        let c = one(said);
        assert_eq!(c.subject, ANSWER_IN_SUBJECT, "{said}");
        assert_eq!(c.content, format!("Wants answers in {lang}"), "{said}");
    }
    // Asked without a standing marker it is proposed too, as "write to me
    // in English" is (the person may say no); a thing to write in a
    // language is a task.
    assert_eq!(
        one("Skriv till mig på engelska").content,
        "Wants answers in Engelska"
    );
    assert!(asks("Can you write a summary for me in English?"));
}

/// Phrasings written for these tests, none taken from the evaluation's
/// held-out transcripts: the shape is read, not the words.
#[test]
fn a_statement_naming_a_value_is_a_note_whatever_frames_it() {
    for (said, kept) in [
        (
            "Quick note, the backup job runs at 02:00",
            "The backup job runs at 02:00",
        ),
        (
            "Attention team: invoices are exported to billing_exports",
            "Invoices are exported to billing_exports",
        ),
        (
            "Be aware that the VPN gateway is vpn-03.corp",
            "The VPN gateway is vpn-03.corp",
        ),
        (
            "The release train leaves every Thursday at 14:00",
            "The release train leaves every Thursday at 14:00",
        ),
        (
            "Everyone please note: builds run on ci-runner-5",
            "Builds run on ci-runner-5",
        ),
    ] {
        let items = extract(said);
        assert_eq!(items.len(), 1, "{said}: {items:?}");
        assert_eq!(items[0].channel, ItemChannel::Operational, "{said}");
        assert_eq!(items[0].content, kept, "{said}");
    }
    // Nothing named, or said of the speaker: no note.
    for said in [
        "Thanks, that helps a lot",
        "My locker is number 12",
        "Sounds good to me",
    ] {
        assert!(
            extract(said)
                .iter()
                .all(|c| c.channel != ItemChannel::Operational),
            "{said}: {:?}",
            extract(said)
        );
    }
}

#[test]
fn a_preference_asked_in_any_shape_is_the_speakers() {
    for (said, kept) in [
        (
            "Would it be possible to reply to me in German from now on?",
            "Wants answers in German",
        ),
        (
            "Wäre es möglich, mir immer auf Englisch zu antworten?",
            "Wants answers in Englisch",
        ),
        ("中文回答我好吗？", "Wants answers in 中文"),
        (
            "Schreib mir ab jetzt immer auf Französisch",
            "Wants answers in Französisch",
        ),
        (
            "Bitte, antworte mir immer auf Spanisch",
            "Wants answers in Spanisch",
        ),
        ("今後は日本語で答えてください", "Wants answers in 日本語"),
        (
            "¿Te importaría contestarme siempre en inglés?",
            "Wants answers in Inglés",
        ),
        (
            "Could you please be brief with me?",
            "Wants you to be brief with me",
        ),
        // Asked in another language than English: kept as said.
        (
            "Pouvez-vous toujours me vouvoyer ?",
            "Pouvez-vous toujours me vouvoyer",
        ),
    ] {
        let items = extract(said);
        assert_eq!(items.len(), 1, "{said}: {items:?}");
        assert_eq!(items[0].channel, ItemChannel::Personal, "{said}");
        assert_eq!(items[0].content, kept, "{said}");
    }
    // A one-off task, or a question about how things are: asked, never kept.
    for said in [
        "Can you send me the report?",
        "Is the digest always at 10?",
        "Did the build run at 10:00 today?",
        "I answered Ben in French yesterday",
    ] {
        assert!(
            extract(said).iter().all(|c| c.channel == ItemChannel::Task),
            "{said}: {:?}",
            extract(said)
        );
    }
}

fn one_opt(text: &str) -> Option<Candidate> {
    extract(text).into_iter().next()
}

pub(super) fn one(text: &str) -> Candidate {
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

/// A personal preference proposed from `said`, its stored text holding `kept`.
fn preference(said: &str, kept: &str) {
    let c = one(said);
    assert_eq!(
        (c.channel, c.kind.as_str()),
        (ItemChannel::Personal, "preference"),
        "{said}: {c:?}"
    );
    assert!(c.content.contains(kept), "{said}: {c:?}");
    assert!(!asks(said), "{said} is proposed, not only answered");
}

#[test]
fn preferences_asked_as_requests_or_questions_are_preferences() {
    for (said, kept) in [
        (
            "Could you always answer me in French?",
            "Wants answers in French",
        ),
        (
            "Can you please keep your answers short from now on?",
            "keep your answers short",
        ),
        (
            "Would you mind always using metric units?",
            "using metric units",
        ),
        (
            "Bitte antworte mir immer auf Deutsch",
            "Wants answers in Deutsch",
        ),
        (
            "¿Puedes responderme siempre en español?",
            "Wants answers in Español",
        ),
        (
            "Please could you always give me bullet points?",
            "give me bullet points",
        ),
        (
            "Kannst du mir ab jetzt immer kurz antworten?",
            "kurz antworten",
        ),
        (
            "Could you answer me in Portuguese from now on, please?",
            "Wants answers in Portuguese",
        ),
        (
            "Podrías usar siempre el sistema métrico?",
            "el sistema métrico",
        ),
        (
            "Can you always include the ticket number in your answers?",
            "include the ticket number",
        ),
    ] {
        preference(said, kept);
    }
    // A one-off request, or a question that only mentions "always", is answered.
    for said in [
        "Could you answer this in French?",
        "Could you tell me if deploys always need a reviewer?",
        "Can you show the report?",
        "Can you always remind me what the VPN host is?",
    ] {
        assert!(asks(said), "{said}: {:?}", extract(said));
        assert!(statements(said).is_empty(), "{said}");
    }
}

/// Phrasings written with the ones above, never tuned on.
#[test]
fn held_out_preferences_asked_as_requests() {
    for (said, kept) in [
        (
            "Can you reply to me in Italian from now on?",
            "Wants answers in Italian",
        ),
        (
            "Would you always use British spelling with me?",
            "British spelling",
        ),
        (
            "Pourriez-vous toujours me répondre en français ?",
            "Wants answers in Français",
        ),
        ("Will you always call me Sam?", "Sam"),
        (
            "Você pode sempre me responder em português?",
            "Wants answers in Português",
        ),
    ] {
        preference(said, kept);
    }
}

/// The lexicon's classes read every language of its table: one
/// standing request a language, each phrased for this test (none is in
/// a transcript), kept with the language it asks for or as said.
#[test]
fn a_standing_request_is_read_in_every_language_of_the_lexicon() {
    for (said, kept) in [
        (
            "Could you always keep replies under five lines?",
            "five lines",
        ),
        (
            "Kannst du mir künftig immer auf Englisch antworten?",
            "Englisch",
        ),
        ("¿Podrías escribirme siempre en inglés?", "Inglés"),
        ("Tu pourrais désormais me répondre en anglais ?", "Anglais"),
        ("Poderia daqui em diante responder em inglês?", "Inglês"),
        ("Potresti d'ora in avanti rispondere in tedesco?", "Tedesco"),
        ("Kun je vanaf nu in het Engels antwoorden?", "Engels"),
        ("これからは英語で答えてください", "英語"),
        ("Можешь впредь отвечать по-немецки?", "Немецки"),
        ("Czy możesz zawsze odpisywać po niemiecku?", "Niemiecku"),
        ("Lütfen bundan böyle İngilizce yanıt ver", "İngilizce"),
        ("Kunde du framöver svara på engelska?", "Engelska"),
        ("请以后用英语回复", "英语"),
        ("Kunne du fremover skrive til mig på engelsk?", "Engelsk"),
    ] {
        preference(said, kept);
    }
}

/// What a person prefers, the name they are called by, and a condition
/// on every reply are standing without a standing word.
#[test]
fn preferring_naming_and_each_reply_are_standing_by_their_shape() {
    for (said, kept) in [
        (
            "Jeg foretrækker svar på engelsk",
            "Wants answers in Engelsk",
        ),
        (
            "Я бы предпочла ответы по-немецки",
            "Wants answers in Немецки",
        ),
        (
            "Please use metric units when you reply to me",
            "metric units",
        ),
        ("Fortan nenn mich bitte Kalle", "Wants to be called Kalle"),
        ("Kald mig Søs", "Wants to be called Søs"),
        ("Could you call me Dr. Ng?", "Wants to be called Dr. Ng"),
        ("By the way, call me Rob", "Wants to be called Rob"),
        ("I go by Sam these days", "Wants to be called Sam"),
        // "meg" is not the lexicon's speaker word (it is a Hungarian word too):
        // a phrase of naming that opens the clause is asked of the agent.
        ("kall meg Tore, det gjør alle", "Wants to be called Tore"),
    ] {
        preference(said, kept);
    }
}

/// A name asked for in a language written without spaces: quoted, or the
/// word the phrase of naming is joined to, before it or after it.
#[test]
fn a_name_is_asked_for_without_spaces_too() {
    for (said, kept) in [
        (
            "これからは「ハル」と呼んでください。",
            "Wants to be called ハル",
        ),
        ("ケンって呼んで", "Wants to be called ケン"),
        ("以后叫我小王吧", "Wants to be called 小王"),
    ] {
        preference(said, kept);
    }
    // A host is no pronoun: "io" of "returns.nordhaul.io" is not Italian "io".
    assert!(!first_person("the returns portal is returns.nordhaul.io"));
    // "go by" and "be called" name the speaker only when they speak of themselves.
    for said in [
        "update your notes: client files can go by WeTransfer now",
        "The new printer will be called Gutenberg",
    ] {
        assert!(
            !extract(said)
                .iter()
                .any(|c| c.content.starts_with("Wants to be called")),
            "{said}: {:?}",
            extract(said)
        );
    }
}

/// A one-off act or a time that is only now, in the lexicon's languages.
#[test]
fn one_off_events_are_read_in_the_lexicon_s_languages() {
    for said in [
        "Jeg købte frokost til 90 DKK",
        "Jag har tandläkare i dag",
        "Kupiłem dziś monitor za 900 zł",
        "Сегодня я заплатил за такси",
        "我今天买了一个键盘",
        "Azi am lucrat deja 8 ore și jumătate, colegul meu e bolnav",
    ] {
        assert!(transient(said), "{said}");
        assert!(statements(said).is_empty(), "{said}");
    }
    assert!(!transient("Jeg arbejder i Aarhus"), "a lasting fact");
}

/// A short head naming a rule or everyone frames a rule in any language
/// of the lexicon; a value said to have changed is a correction. Each
/// phrased for this test.
#[test]
fn framings_and_changes_are_read_by_their_classes() {
    for (said, kept) in [
        (
            "Regel für alle: Urlaubsanträge gehen an hr_leave",
            "Urlaubsanträge gehen an hr_leave",
        ),
        (
            "Politique de l'équipe : les congés passent par leave_portal",
            "Les congés passent par leave_portal",
        ),
        (
            "Dla wszystkich: faktury trafiają do invoices_pl",
            "Faktury trafiają do invoices_pl",
        ),
    ] {
        rule(said, kept);
    }
    let q = one("Question for the team: is the build server ci-runner-04?");
    assert_eq!(q.channel, ItemChannel::Task, "{q:?}");
    for said in [
        "Heads-up, the VPN gateway is vpn-04.example.com now",
        "Rettelse: frokosten starter 12:30",
        "Kleines Update, das Standup ist jetzt um 09:15",
        "Update for the team: release builds use rel_branch_2",
    ] {
        let c = one(said);
        assert_eq!(
            (c.channel, c.kind.as_str()),
            (ItemChannel::Operational, "correction"),
            "{said}: {c:?}"
        );
    }
    // "From now on" is standing, no change of value.
    let c = one("From now on, releases are tagged in release_log");
    assert_ne!(c.kind, "correction", "{c:?}");
}

/// A fact of the speaker's with a value, opened by their possessive, is
/// theirs on the subject of the thing named; a preference said in
/// another language is kept as said; how to reply to the speaker is
/// standing. Each phrased for this test.
#[test]
fn possessions_preferences_and_replies_to_the_speaker_are_read_by_class() {
    let a = one("My locker is number 118");
    let b = one("Good news, my locker is number 240 now");
    assert_eq!(
        (a.channel, a.kind.as_str()),
        (ItemChannel::Personal, "fact"),
        "{a:?}"
    );
    assert_eq!(a.subject, b.subject, "one subject: a new value conflicts");
    assert_eq!(b.content, "My locker is number 240 now");
    for (said, kept) in [
        (
            "Prefiero respuestas cortas y directas",
            "Prefiero respuestas cortas y directas",
        ),
        ("Pode me responder em tópicos?", "tópicos"),
        ("Could you answer me in bullet points?", "bullet points"),
    ] {
        preference(said, kept);
    }
    let c = one("Can you answer me this: where is the printer?");
    assert_eq!(c.channel, ItemChannel::Task, "{c:?}");
}

/// An operational rule from `said`, stored as `kept` (its framing dropped).
fn rule(said: &str, kept: &str) {
    let c = one(said);
    assert_eq!(c.channel, ItemChannel::Operational, "{said}: {c:?}");
    assert_eq!(c.content, kept, "{said}");
}

#[test]
fn standing_rules_in_any_phrasing_are_operational_without_their_framing() {
    let seed = one("Always use example_orders for the weekly digest");
    assert_eq!(seed.subject, "weekly digest");
    assert_eq!(
        one("The weekly digest uses example_archive").subject,
        seed.subject
    );
    for (said, kept) in [
        (
            "Always use example_orders for the weekly digest",
            "Always use example_orders for the weekly digest",
        ),
        (
            "rule: always use example_orders for the weekly digest",
            "Always use example_orders for the weekly digest",
        ),
        (
            "Make sure you always use example_orders for the weekly digest",
            "Always use example_orders for the weekly digest",
        ),
        (
            "Please remember for everyone: the weekly digest is built from example_orders",
            "The weekly digest is built from example_orders",
        ),
        (
            "Team rule — deploys need a second reviewer",
            "Deploys need a second reviewer",
        ),
        (
            "Note for everyone: laptop requests now go by email to it-desk@example.com",
            "Laptop requests now go by email to it-desk@example.com",
        ),
        (
            "New policy: expense claims over 500 EUR need approval from finance",
            "Expense claims over 500 EUR need approval from finance",
        ),
        (
            "Make sure to always cc the on-call engineer on incident reports",
            "Always cc the on-call engineer on incident reports",
        ),
        (
            "Reminder for the team: the VPN endpoint is vpn2.example.com",
            "The VPN endpoint is vpn2.example.com",
        ),
        (
            "Rule of thumb for everyone: never deploy on Fridays",
            "Never deploy on Fridays",
        ),
    ] {
        rule(said, kept);
    }
    // Asked as a request, it is still the team's rule (an identifier is the team's).
    rule(
        "Could you always use example_orders for the weekly digest?",
        "Use example_orders for the weekly digest",
    );
    // A framing word that is not a framing, and a rule that serves the speaker.
    assert!(extract("Team rules are in the wiki").is_empty());
    assert_eq!(
        one("Make sure you always answer me in French").subject,
        ANSWER_IN_SUBJECT
    );
}

/// Phrasings written with the ones above, never tuned on.
#[test]
fn held_out_standing_rules() {
    for said in [
        "Policy: the weekly digest always uses example_orders",
        "From now on, everyone's reports go to the #reports channel",
        "Going forward, the monthly invoice export uses the billing_v2 table",
        "Everyone should use the staging-eu cluster for load tests",
        "Standing rule: always tag releases with the ticket number",
    ] {
        let c = one(said);
        assert_eq!(c.channel, ItemChannel::Operational, "{said}: {c:?}");
        let framing = said.split([':', ',']).next().unwrap_or(said);
        assert!(
            said == c.content || !c.content.starts_with(framing),
            "{said}: {c:?}"
        );
    }
}

/// A standing rule stated with no value to key it, its framing dropped.
#[test]
fn a_standing_rule_without_a_value_is_operational() {
    for (said, kept) in [
        (
            "Just so you know, hazmat shipments always need a sign-off from compliance before they leave.",
            "Hazmat shipments always need a sign-off from compliance before they leave",
        ),
        (
            "Heads up: going forward visitors sign in at the front desk",
            "Going forward visitors sign in at the front desk",
        ),
    ] {
        let c = one(said);
        assert_eq!(c.channel, ItemChannel::Operational, "{said}: {c:?}");
        assert_eq!(c.content, kept, "{said}");
    }
    // Of the speaker, it is theirs: no rule for everyone.
    assert!(one_opt("I always forget my badge on Mondays")
        .is_none_or(|c| c.channel != ItemChannel::Operational));
}

#[test]
fn one_off_events_are_answered_and_never_read_for_memory() {
    for said in [
        "I spent 740 EUR on a conference ticket. Who has to sign that off?",
        "I have a meeting with the auditors today. Where is the meeting room list?",
        "I paid the hotel myself yesterday. Who approves the refund?",
        "I'm in Berlin today for a customer visit. What's the VPN endpoint?",
        "I booked a flight to Madrid this morning. Do I need approval?",
        "I just ordered two laptops. Who signs the invoice?",
    ] {
        assert!(
            statements(said).is_empty(),
            "{said}: {:?}",
            statements(said)
        );
        assert!(asks(said), "{said}");
        assert!(extract(said).iter().all(|c| c.channel == ItemChannel::Task));
    }
    // What lasts is still read: a place of work, one that starts today.
    for said in [
        "I work from the Lisbon office.",
        "From today I work from the Lisbon office.",
    ] {
        assert_eq!(statements(said).len(), 1, "{said}");
    }
}

/// Phrasings written with the ones above, never tuned on. The miss is
/// kept as measured (2 of 3): "we" is not read as the speaker, so a
/// team's one-off still reaches the extractor.
#[test]
fn held_out_one_off_events() {
    let missed: Vec<&str> = [
        "I bought a new monitor for 230 EUR. How do I claim it?",
        "We had a team lunch for 180 EUR. Which cost center do I use?",
        "Ich habe heute 90 EUR für ein Taxi ausgegeben. Wer muss das freigeben?",
    ]
    .into_iter()
    .filter(|said| !statements(said).is_empty() || !asks(said))
    .collect();
    assert!(missed.is_empty(), "{missed:?}");
    // What the team does for good is no one-off.
    assert!(!transient(
        "We use the billing_v3 schema for the invoice export"
    ));
    assert!(transient("We met the auditors this morning"));
}

#[test]
fn first_person_is_said_of_oneself() {
    for (clause, mine) in [
        ("I work on payments", true),
        ("my desk is on the third floor", true),
        ("Responde-me sempre em português", true),
        ("He told you in private", false),
        ("The VPN is at vpn.example.com", false),
        // German "im" ("in the") is no English "I'm" typed without its apostrophe.
        ("Der im Büro frisst die Etiketten", false),
        ("Ich drucke im Lager", true),
        // A lower-case "i" is English "I" typed fast, or another language's "in" or "and".
        ("i prefer the window seat on long trips", true),
        ("Vi har lige fået nye stole i mødelokalet", false),
        ("Kawa i herbata stoją w szafce przy oknie", false),
        ("Det ligger i skapet bredvid skrivaren", false),
    ] {
        assert_eq!(first_person(clause), mine, "{clause}");
    }
}

/// Phrasings written for this test, in languages and words no transcript
/// holds: a request addressed to the agent about how it answers the
/// speaker — language, length, format, tone, emoji — is a lasting
/// preference without any standing word.
#[test]
fn a_request_about_how_to_answer_the_speaker_needs_no_standing_word() {
    for (said, kept) in [
        ("No emoticons for me, thanks", "emoticons"),
        (
            "No bullet points for me please, I read on my phone",
            "bullet",
        ),
        (
            "Antworte mir bitte auf Englisch",
            "Wants answers in Englisch",
        ),
        ("Odpowiadaj mi krótko, proszę", "krótko"),
        ("Kun je mij kort antwoorden?", "kort"),
        ("Bana kısaca cevap verir misin?", "kısaca"),
        ("저에게는 반말로 대답해 주세요", "반말로"),
        ("私には短く答えてください", "短く"),
        ("Пиши мне коротко, пожалуйста", "коротко"),
        ("bez emotek proszę", "emotek"),
        (
            "Wil je de bedragen voor mij voortaan in dollars geven?",
            "dollars",
        ),
    ] {
        preference(said, kept);
    }
    // A thing to make, a thing to send, an answer to someone else, a
    // question about replies: tasks and questions, answered.
    for said in [
        "Can you write me a short summary of the meeting?",
        "Could you send me the short version of the report?",
        "Please reply to the auditors briefly",
        "Why do you answer me so briefly?",
        "Kannst du mir einen kurzen Bericht schreiben?",
    ] {
        assert!(
            extract(said).iter().all(|c| c.kind != "preference"),
            "{said}: {:?}",
            extract(said)
        );
    }
}

/// The unit a person works in (a team, a desk, a beat, a department) is
/// one subject, however it is named and whatever verb says it: a new one
/// conflicts with the old and is asked as a contradiction. Phrased for
/// this test.
#[test]
fn the_speakers_unit_at_work_is_one_subject() {
    let said = [
        "FYI I'm now on the payments team",
        "Quick update: I joined the billing squad last month",
        "Just so you know, I run the night desk",
        "Ich bin jetzt in der Abteilung Vertrieb",
    ];
    for s in said {
        let c = one(s);
        assert_eq!(
            (c.channel, c.kind.as_str(), c.subject.as_str()),
            (ItemChannel::Personal, "fact", "fact:unit"),
            "{s}: {c:?}"
        );
    }
    assert_eq!(
        one(said[1]).content,
        "I joined the billing squad last month"
    );
    // What the team does, or the speaker's team's meeting, is no unit of theirs.
    for s in [
        "The payments team ships on Fridays",
        "My team meets at 10:00",
    ] {
        assert!(
            extract(s).iter().all(|c| c.subject != "fact:unit"),
            "{s}: {:?}",
            extract(s)
        );
    }
}

/// A statement whose subject opens with a word that is also a verb of a
/// request ("Print deadline …", "Build server …") is a note, kept; the
/// request itself is still a task. Phrased for this test.
#[test]
fn a_subject_that_opens_like_a_request_is_stated() {
    for said in [
        "Build server for the mobile app is ci-mac-03",
        "Check-in desk for visitors is at gate B7",
        "Print quota for interns is 200 pages a month",
        "Print deadline of the weekend magazine is Thursday 12:00",
        "Everyone has to submit timesheets in Clockify by Monday 09:00",
    ] {
        let c = one(said);
        assert_eq!(c.channel, ItemChannel::Operational, "{said}: {c:?}");
        assert!(!asks(said), "{said} is a statement");
    }
    for said in [
        "Print the report for the board",
        "Check if the build is green",
        "Make sure the backup is done",
        "What time is the standup",
    ] {
        assert!(asks(said), "{said}: {:?}", extract(said));
    }
}

/// "What do you call me?" in any language of the lexicon: a question with
/// a verb of naming and the one it names. Phrased for this test.
#[test]
fn asking_ones_own_name_is_read_in_every_language() {
    for asked in [
        "What do you call me again?",
        "Wie nennst du mich nochmal?",
        "Como você me chama?",
        "Как ты меня называешь?",
        "Hvad kalder du mig?",
        "何と呼んでくれますか？",
    ] {
        assert!(asks_own_name(asked), "{asked}");
    }
    for asked in [
        "Who called the meeting?",
        "Call me Bo",
        "What is the VPN host?",
    ] {
        assert!(!asks_own_name(asked), "{asked}");
    }
    // An article of another language is no kind of thing: "la GPU" asks
    // about the GPU the note names.
    assert!(!another_of_its_kind(
        &token_sequence("¿Dónde reservo la GPU?"),
        "The shared GPU box is gpu-kestrel.lab:8443"
    ));
    // An abbreviation typed in lower case is a word of its own.
    assert!(shares_a_word(
        &content_tokens("what's the vpn address again?"),
        "Remote staff connect through VPN gateway vpn-gw2"
    ));
    // Nor does a note match a question by such a word alone.
    assert!(!shares_a_word(
        &content_tokens("¿cuál es la contraseña del portal?"),
        "Les congés sont validés dans la salle Colbert"
    ));
}

/// A correction keeps the new value only; the old one it names is dropped
/// when it is a value, never a word. Phrased for this test.
#[test]
fn a_correction_keeps_the_new_value_only() {
    let c = one("Actually the badge office is in room C-12, not C-10 — they moved last week");
    assert_eq!(c.kind, "correction", "{c:?}");
    assert_eq!(
        c.content,
        "The badge office is in room C-12 — they moved last week"
    );
    assert!(!c.content.contains("C-10"));
    let words = one("Correction: deploys now need two reviewers, not one");
    assert!(words.content.contains("not one"), "{words:?}");
    // A rule that names what not to use keeps it: it is no correction.
    let rule = one("Always use example_orders, not example_archive");
    assert!(rule.content.contains("example_archive"), "{rule:?}");
}
