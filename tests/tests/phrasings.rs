//! Issue 46 on phrasings the rules first missed, over the wire: a name
//! with a title, leave asked to change every reply, a reply language asked
//! for good in the yes/no table's other languages, a romanised yes, a model
//! that promises to carry on, and a question that shares only "go" with a
//! routing note or one word with it, a change named in its heading, a move
//! between named places. Every phrasing here was written for these tests, none
//! taken from an evaluation transcript.

use memory::{ItemChannel, Role, Status};
use steward::llm::offline;
use steward_tests::fake_llm::{small_model_extraction, Answer, FakeLlm, TEXT};
use steward_tests::{both_dbs, Harness};

/// The record id a receipt names ("… (id: 7).").
fn receipt_id(reply: &str) -> String {
    reply
        .split("(id: ")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .unwrap_or_default()
        .to_string()
}

/// The fake OpenAI server answering every reply "Okay." and extracting as a
/// small model does.
async fn answering_okay() -> FakeLlm {
    let fake = FakeLlm::start().await;
    fake.always("memory_items", small_model_extraction());
    fake.always(TEXT, Answer::Content("Okay.".into()));
    fake
}

/// The active records' texts.
async fn kept(h: &Harness) -> Vec<String> {
    h.records()
        .await
        .into_iter()
        .filter(|r| r.status == Status::Active)
        .map(|r| r.written.content)
        .collect()
}

#[tokio::test]
async fn a_name_with_a_title_is_asked_and_a_romanised_yes_keeps_it() {
    let fake = FakeLlm::start().await;
    fake.always("memory_items", small_model_extraction());
    fake.always(
        TEXT,
        Answer::Content("Of course! I will continue to call you Professor.".into()),
    );
    let h = Harness::with_config(fake.config()).await;
    h.pair("222", Role::User).await;
    let asked = h
        .dm(
            "222",
            "Would you address me as Prof. Lindqvist going forward?",
        )
        .await;
    assert_eq!(
        asked,
        "Remember this? Wants to be called Prof. Lindqvist — reply yes or no"
    );
    // The rules asked; the model was never asked to answer (nor promised).
    assert!(fake.received_for(TEXT).is_empty());
    let saved = h.dm("222", "da").await;
    assert!(saved.starts_with("Сохранено: "), "{saved}");
    assert_eq!(kept(&h).await, ["Wants to be called Prof. Lindqvist"]);
}

#[tokio::test]
async fn leave_asked_for_every_reply_is_proposed_after_the_answer_and_never_promised() {
    let fake = FakeLlm::start().await;
    fake.always("memory_items", small_model_extraction());
    let h = Harness::with_config(fake.config()).await;
    h.pair("111", Role::Admin).await;
    h.pair("222", Role::User).await;
    h.dm(
        "111",
        "@notes: The badge desk is staffed by Kim until 16:00.",
    )
    .await;
    fake.push(
        TEXT,
        Answer::Content(
            "Sure, I will continue to keep my responses short. Kim staffs the badge desk until 16:00."
                .into(),
        ),
    );
    let reply = h
        .dm(
            "222",
            "Is it ok if you make your responses a bit shorter? And who staffs the badge desk?",
        )
        .await;
    assert!(reply.contains("16:00"), "{reply}");
    assert!(!reply.contains("continue to"), "{reply}");
    assert!(
        reply.ends_with(
            "Remember this? Wants you to make your responses a bit shorter — reply yes or no"
        ),
        "{reply}"
    );
    assert!(h.dm("222", "yes").await.contains("(id: "));
    assert!(kept(&h)
        .await
        .contains(&"Wants you to make your responses a bit shorter".to_string()));
}

#[tokio::test]
async fn a_reply_language_asked_for_good_in_turkish_is_asked_and_kept_on_evet() {
    let fake = FakeLlm::start().await;
    fake.always("memory_items", small_model_extraction());
    fake.always(
        TEXT,
        Answer::Content("Tamam, bundan böyle hep İspanyolca yazacağım.".into()),
    );
    let h = Harness::with_config(fake.config()).await;
    h.pair("333", Role::User).await;
    // A capital İ lower-cases to "i" and a combining dot: still the language's name.
    let asked = h.dm("333", "Artık bana İspanyolca cevap ver").await;
    assert_eq!(
        asked,
        "Remember this? Wants answers in İspanyolca — reply yes or no"
    );
    assert!(fake.received_for(TEXT).is_empty());
    let saved = h.dm("333", "evet").await;
    assert!(saved.starts_with("Kaydedildi: "), "{saved}");
    assert_eq!(kept(&h).await, ["Wants answers in İspanyolca"]);
}

#[tokio::test]
async fn a_question_sharing_one_word_or_only_go_with_a_routing_note_is_not_answered_from_it() {
    for (name, db) in both_dbs().await {
        let h = Harness::on(db, steward::Config::default());
        h.pair("111", Role::Admin).await;
        h.pair("222", Role::User).await;
        h.dm("111", "@notes: Badge requests go to #security-desk.")
            .await;
        h.dm(
            "111",
            "@notes: Toner orders are placed in #office-supplies.",
        )
        .await;
        for unrelated in [
            "Where does a broken kettle go?",
            "Who handles chair orders?",
        ] {
            let reply = h.dm("222", unrelated).await;
            assert!(
                !reply.contains("#security-desk") && !reply.contains("#office-supplies"),
                "{name}: {unrelated}: {reply}"
            );
        }
        // The notes still answer what they are about.
        let reply = h.dm("222", "Where do badge requests go?").await;
        assert!(reply.contains("#security-desk"), "{name}: {reply}");
        let reply = h.dm("222", "Where are toner orders placed?").await;
        assert!(reply.contains("#office-supplies"), "{name}: {reply}");
    }
}

#[tokio::test]
async fn a_models_answer_from_a_note_the_question_is_not_about_is_not_shown() {
    let fake = FakeLlm::start().await;
    fake.always("memory_items", small_model_extraction());
    let h = Harness::with_config(fake.config()).await;
    h.pair("111", Role::Admin).await;
    h.pair("222", Role::User).await;
    h.dm("111", "@notes: Badge requests go to #security-desk.")
        .await;
    // A small model names the only channel it was given for a question no note covers.
    fake.push(
        TEXT,
        Answer::Content("Broken kettles go to the #security-desk channel.".into()),
    );
    let reply = h.dm("222", "Where does a broken kettle go?").await;
    assert!(!reply.contains("#security-desk"), "{reply}");
    assert!(!reply.contains("Memory reference"), "{reply}");
    // The note still answers what it is about, cited.
    fake.push(
        TEXT,
        Answer::Content("Badge requests go to #security-desk.".into()),
    );
    let reply = h.dm("222", "Where do badge requests go?").await;
    assert!(reply.contains("#security-desk"), "{reply}");
    assert!(reply.contains("Memory reference: 1"), "{reply}");
}

/// A language of the lexicon, read end to end: a reply language asked for
/// good in it (`said`, the name as shown), a yes in it and the receipt that
/// answers it, and a question in it.
struct Spoken {
    said: &'static str,
    name: &'static str,
    yes: &'static str,
    receipt: &'static str,
    question: &'static str,
}

/// Issue 46: a reply language asked for in each language lexicon-v2 added
/// is labelled personal and said of the speaker (what a real model's item
/// needs to be kept), is asked as "Remember this?", and a yes in the same
/// language keeps it with a receipt in that language; a question in it is
/// answered and never read as a statement. Each phrased for this test.
#[tokio::test]
async fn a_reply_language_a_yes_and_a_question_are_read_in_every_added_language() {
    let h = Harness::new().await;
    let spoken = [
        Spoken {
            said: "Vastaa minulle aina suomeksi",
            name: "Suomeksi",
            yes: "Kyllä kiitos",
            receipt: "Tallennettu: ",
            question: "Missä tulostin on?",
        },
        Spoken {
            said: "Απάντα μου πάντα στα ελληνικά",
            name: "Ελληνικά",
            yes: "Ναι",
            receipt: "Αποθηκεύτηκε: ",
            question: "Πού είναι ο εκτυπωτής?",
        },
        Spoken {
            said: "मुझे हमेशा हिंदी में जवाब दो",
            name: "हिंदी",
            yes: "हाँ जी",
            receipt: "सहेजा गया: ",
            question: "प्रिंटर कहाँ है?",
        },
        Spoken {
            said: "Mujhe hamesha Hindi mein jawab do",
            name: "Hindi",
            yes: "haan ji",
            receipt: "सहेजा गया: ",
            question: "Printer kahan hai?",
        },
        Spoken {
            said: "Odpovídej mi vždy česky",
            name: "Česky",
            yes: "Ano, díky",
            receipt: "Uloženo: ",
            question: "Kde je tiskárna?",
        },
        Spoken {
            said: "Відповідай мені завжди українською",
            name: "Українською",
            yes: "Так",
            receipt: "Збережено: ",
            question: "Де принтер?",
        },
        Spoken {
            said: "앞으로 항상 저한테 한국어로 대답해 주세요",
            name: "한국어로",
            yes: "네",
            receipt: "저장했습니다: ",
            question: "프린터는 어디에 있어요?",
        },
        Spoken {
            said: "اكتب لي دائما بالعربية",
            name: "بالعربية",
            yes: "نعم",
            receipt: "تم الحفظ: ",
            question: "أين الطابعة?",
        },
        Spoken {
            said: "Jeg vil at du alltid svarer på norsk",
            name: "Norsk",
            yes: "Ja takk",
            receipt: "Lagret: ",
            question: "Hvor er skriveren?",
        },
        Spoken {
            said: "Mindig magyarul válaszolj nekem",
            name: "Magyarul",
            yes: "Igen, köszönöm",
            receipt: "Mentve: ",
            question: "Hol van a nyomtató?",
        },
        Spoken {
            said: "Răspunde-mi întotdeauna în română",
            name: "Română",
            yes: "Da, mersi",
            receipt: "Salvat: ",
            question: "Unde este imprimanta?",
        },
        Spoken {
            said: "Tolong selalu jawab saya dalam bahasa Indonesia",
            name: "Indonesia",
            yes: "Iya, boleh",
            receipt: "Tersimpan: ",
            question: "Printernya di mana?",
        },
        Spoken {
            said: "Hãy luôn trả lời tôi bằng tiếng Việt",
            name: "Việt",
            yes: "Vâng",
            receipt: "Đã lưu: ",
            question: "Máy in ở đâu?",
        },
        Spoken {
            said: "תענה לי תמיד בעברית",
            // The name without the preposition written onto it.
            name: "עברית",
            yes: "כן",
            receipt: "נשמר: ",
            question: "איפה המדפסת?",
        },
    ];
    for (i, s) in spoken.iter().enumerate() {
        let kept = format!("Wants answers in {}", s.name);
        let label = offline::label(s.said).unwrap_or_else(|| panic!("{}: no label", s.said));
        assert_eq!(
            (label.channel, label.content.as_str()),
            (ItemChannel::Personal, kept.as_str()),
            "{}",
            s.said
        );
        assert!(offline::first_person(s.said), "{}", s.said);
        assert!(offline::statements(s.question).is_empty(), "{}", s.question);

        let user = format!("3{i:02}");
        h.pair(&user, Role::User).await;
        let answered = h.dm(&user, s.question).await;
        assert!(
            !answered.contains("Remember this?"),
            "{}: {answered}",
            s.question
        );
        let asked = h.dm(&user, s.said).await;
        assert_eq!(
            asked,
            format!("Remember this? {kept} — reply yes or no"),
            "{}",
            s.said
        );
        let saved = h.dm(&user, s.yes).await;
        assert!(saved.starts_with(s.receipt), "{}: {saved}", s.yes);
    }
    let records = kept(&h).await;
    for s in &spoken {
        assert!(
            records.contains(&format!("Wants answers in {}", s.name)),
            "{}: {records:?}",
            s.said
        );
    }
}

/// Words a new language shares with an older one were left out of its row
/// (`prompts/texts/lexicon.toml`): these statements are not said of the
/// speaker, and a standing rule's framing is still read, in the languages
/// whose words they are. Each phrased for this test.
#[test]
fn words_another_language_shares_are_not_read_as_the_speaker() {
    for said in [
        // Danish and Norwegian "én" is "one", Hungarian "én" is "I".
        "Der er én printer på 3. sal",
        // Hungarian "meg" is a verb's prefix, Norwegian "meg" is "me".
        "A nyomtatót meg kell javítani a 4.12-es teremben",
        // Portuguese "já" is "already", Czech "já" is "I".
        "O relatório já está em reports_q3",
        // Polish "minut" is "minutes", Finnish "minut" is "me".
        "Spotkanie trwa 30 minut",
        // Dutch "mei" is "May", Romanian "mei" is "my".
        "De release is op 5 mei",
        // Swedish "mera" is "more", Hinglish "mera" is "my".
        "Backupen tar mera tid på fredagar",
    ] {
        assert!(!offline::first_person(said), "{said}");
    }
}

/// What a user says they are, with their language's "I am", is asked and
/// kept as theirs — never refused as a claimed rule because it names a
/// value — and a move to another place named by its code is asked as a
/// change of it; a shift lead's note does not answer a question about
/// night shifts. The small model answers beside; the rules decide.
#[tokio::test]
async fn what_a_user_says_they_are_is_theirs_and_a_move_replaces_it() {
    let fake = FakeLlm::start().await;
    fake.always("memory_items", small_model_extraction());
    fake.always(TEXT, Answer::Content("Okay.".into()));
    for (name, db) in both_dbs().await {
        let h = Harness::on(db, fake.config());
        h.pair("111", Role::Admin).await;
        h.pair("222", Role::User).await;
        h.pair("333", Role::User).await;
        let zone = h
            .dm(
                "222",
                "Od tego miesiąca jestem na stałe w strefie B4, same noce.",
            )
            .await;
        assert!(zone.contains("Remember this? "), "{name}: {zone}");
        assert!(!zone.contains("need an administrator"), "{name}: {zone}");
        assert!(h.dm("222", "tak").await.starts_with("Zapisano: "), "{name}");
        let moved = h.dm("222", "Od dziś przenieśli mnie do strefy A7").await;
        assert!(moved.contains("it conflicts with #"), "{name}: {moved}");
        let replaced = h.dm("222", "tak").await;
        assert!(replaced.contains("It replaces #"), "{name}: {replaced}");
        let vegan = h.dm("333", "Ik ben trouwens veganist 🌱").await;
        assert!(vegan.contains("Remember this? "), "{name}: {vegan}");
        let saved = h.dm("333", "ja").await;
        assert!(saved.contains("(id: "), "{name}: {saved}");
        let kept = kept(&h).await;
        assert!(
            kept.iter().any(|k| k.contains("A7")) && !kept.iter().any(|k| k.contains("B4")),
            "{name}: {kept:?}"
        );
        assert!(
            kept.iter().any(|k| k.contains("veganist")),
            "{name}: {kept:?}"
        );
        assert!(!kept.iter().any(|k| k.contains("Okay")), "{name}: {kept:?}");
    }
}

/// A change named in its heading ("Change for the Reading Room: …") is
/// asked by an administrator as replacing the note on that room, and
/// answered with the new value; the same heading from a user changes
/// nothing. A move between places named by their names is asked as a change
/// of where the user works, and a yes replaces the old place.
#[tokio::test]
async fn a_change_named_in_its_heading_replaces_its_note_and_a_named_place_move_replaces_the_old() {
    let fake = FakeLlm::start().await;
    fake.always("memory_items", small_model_extraction());
    fake.always(TEXT, Answer::Content("Okay.".into()));
    for (name, db) in both_dbs().await {
        let h = Harness::on(db, fake.config());
        h.pair("111", Role::Admin).await;
        h.pair("222", Role::User).await;
        let noted = h
            .dm("111", "@notes: The Reading Room seats at most 40 people.")
            .await;
        assert!(noted.contains("(id: "), "{name}: {noted}");
        let claimed = h
            .dm(
                "222",
                "Change for the Reading Room: from today it's max 80 people",
            )
            .await;
        assert!(
            claimed.contains("need an administrator"),
            "{name}: {claimed}"
        );
        let asked = h
            .dm(
                "111",
                "Change for the Reading Room: the fire officer lowered it, from today it's max 30 people",
            )
            .await;
        assert!(asked.contains("replaces #"), "{name}: {asked}");
        assert!(h.dm("111", "yes").await.contains("(id: "), "{name}");
        let notes = kept(&h).await;
        // Kept as the note said it, with the new value (its words name it
        // as the note does: "30 people" of "40 people").
        assert!(
            notes
                .iter()
                .any(|k| k.contains("Reading Room") && k.contains("30"))
                && !notes.iter().any(|k| k.contains("40") || k.contains("80")),
            "{name}: {notes:?}"
        );
        let answer = h
            .dm("222", "How many people fit in the Reading Room?")
            .await;
        assert!(
            answer.contains("30") && !answer.contains("40"),
            "{name}: {answer}"
        );
        let works = h.dm("222", "I work at the Rose Pavilion").await;
        assert!(works.contains("Remember this? "), "{name}: {works}");
        assert!(h.dm("222", "yes").await.contains("(id: "), "{name}");
        let moved = h
            .dm("222", "They've transferred me to the Hall of Mirrors")
            .await;
        assert!(moved.contains("it conflicts with #"), "{name}: {moved}");
        assert!(h.dm("222", "yes").await.contains("It replaces #"), "{name}");
        let kept = kept(&h).await;
        assert!(
            kept.iter().any(|k| k.contains("Hall of Mirrors"))
                && !kept.iter().any(|k| k.contains("Rose Pavilion")),
            "{name}: {kept:?}"
        );
    }
}

/// A correction in Dutch that says the old value no longer holds is kept as
/// the note it replaces with the new value carried in: no note and no
/// answer says the old value. The Dutch "ja" is answered in Dutch, though
/// German reads "ja" first. A Norwegian's move away from a place they named
/// is asked as a change of what they said, and a yes replaces it.
#[tokio::test]
async fn a_corrections_new_value_is_carried_into_its_note_and_a_move_away_replaces_the_old() {
    let fake = FakeLlm::start().await;
    fake.always("memory_items", small_model_extraction());
    fake.always(TEXT, Answer::Content("Okay.".into()));
    for (name, db) in both_dbs().await {
        let h = Harness::on(db, fake.config());
        h.pair("111", Role::Admin).await;
        h.pair("222", Role::User).await;
        let noted = h
            .dm(
                "111",
                "@notes: Batches lageren minimaal 21 dagen voordat er gebotteld wordt.",
            )
            .await;
        assert!(noted.contains("(id: "), "{name}: {noted}");
        let asked = h
            .dm(
                "111",
                "Correctie: de 21 dagen lageren geldt niet meer, het wordt voortaan minimaal 28 dagen",
            )
            .await;
        assert!(
            asked.contains("Batches lageren minimaal 28 dagen voordat er gebotteld wordt")
                && asked.contains("replaces #"),
            "{name}: {asked}"
        );
        let receipt = h.dm("111", "ja").await;
        assert!(receipt.starts_with("Opgeslagen"), "{name}: {receipt}");
        // The same shape from a user changes nothing.
        let claimed = h
            .dm(
                "222",
                "Correctie: de 28 dagen geldt niet meer, het wordt voortaan 7 dagen",
            )
            .await;
        assert!(
            claimed.contains("need an administrator"),
            "{name}: {claimed}"
        );
        let notes = kept(&h).await;
        assert!(
            notes.iter().any(|k| k.contains("28 dagen"))
                && !notes
                    .iter()
                    .any(|k| k.contains("21") || k.contains(" 7 dagen")),
            "{name}: {notes:?}"
        );
        let answer = h.dm("222", "Hoe lang moeten batches lageren?").await;
        assert!(
            answer.contains("28") && !answer.contains("21"),
            "{name}: {answer}"
        );
        let placed = h
            .dm("222", "Jeg er fast plassert på Havbris fra denne uka")
            .await;
        assert!(placed.contains("Remember this? "), "{name}: {placed}");
        assert!(h.dm("222", "ja").await.starts_with("Lagret"), "{name}");
        let moved = h
            .dm(
                "222",
                "Oppdatering: fra i dag er jeg flytta til Lyngheia, er ikke på Havbris lenger.",
            )
            .await;
        assert!(moved.contains("it conflicts with #"), "{name}: {moved}");
        assert!(h.dm("222", "ja").await.contains("It replaces #"), "{name}");
        let kept = kept(&h).await;
        assert!(
            kept.iter().any(|k| k.contains("Lyngheia"))
                && !kept.iter().any(|k| k.starts_with("Jeg er fast plassert")),
            "{name}: {kept:?}"
        );
    }
}

/// A user's own saved fact reaches the model whole in a private
/// conversation, though the question shares no word with it (another form
/// of the word, another language); in a group thread it does not, and
/// another user's never does.
#[tokio::test]
async fn a_users_own_memory_reaches_the_model_in_private_whatever_the_question_says() {
    let fake = FakeLlm::start().await;
    fake.always("memory_items", small_model_extraction());
    fake.always(TEXT, Answer::Content("Okay.".into()));
    for (name, db) in both_dbs().await {
        let h = Harness::on(db, fake.config());
        h.pair("222", Role::User).await;
        h.pair("333", Role::User).await;
        h.dm("222", "Od dziś przenieśli mnie do strefy D1").await;
        assert!(h.dm("222", "tak").await.contains("(id: "), "{name}");
        fake.clear_received();
        h.dm("222", "Przypomnij mi, gdzie teraz pracuję?").await;
        let given = fake.received_for(TEXT);
        assert!(
            given.iter().any(|r| r.text().contains("strefy D1")),
            "{name}: the model was not given the speaker's own record"
        );
        fake.clear_received();
        h.dm("333", "Przypomnij mi, gdzie teraz pracuję?").await;
        h.group(
            Some("222"),
            "crew-room",
            "Przypomnij mi, gdzie teraz pracuję?",
        )
        .await;
        let given = fake.received_for(TEXT);
        assert!(!given.is_empty(), "{name}");
        assert!(
            !given.iter().any(|r| r.text().contains("strefy D1")),
            "{name}: another user or a group thread was given the record"
        );
    }
}

/// A correction retires only the note it names: sharing "ist" and "um"
/// with the hotline's note names nothing (a new note, asked alone); a new
/// value of the shape of one a note holds, beside a word of that note,
/// names it — asked "replaces #…", carried into the note's words, and the
/// old value is never told again, whatever a small model answers.
#[tokio::test]
async fn a_correction_replaces_only_the_note_it_names() {
    let fake = FakeLlm::start().await;
    fake.always("memory_items", small_model_extraction());
    fake.always(TEXT, Answer::Content("Okay.".into()));
    for (name, db) in both_dbs().await {
        let h = Harness::on(db, fake.config());
        h.pair("111", Role::Admin).await;
        h.pair("222", Role::User).await;
        for note in [
            "@notes: Die Hotline der Werkstatt ist 0711 400 123 und rund um die Uhr erreichbar.",
            "@notes: Das Lager hinter Halle 3 hat ein Zahlenschloss, Code 5521.",
        ] {
            assert!(h.dm("111", note).await.contains("(id: "), "{name}");
        }
        let asked = h
            .dm(
                "111",
                "Info für alle: ab Donnerstag beginnt die Spätschicht um 13:30, nicht mehr um 14.",
            )
            .await;
        assert!(
            asked.starts_with("Remember this? ") && !asked.contains("replaces"),
            "{name}: {asked}"
        );
        let saved = h.dm("111", "ja").await;
        assert!(
            saved.starts_with("Gespeichert") && !saved.contains("replaces"),
            "{name}: {saved}"
        );
        let corrected = h.dm("111", "Achtung: der Code ist jetzt 8830.").await;
        assert!(
            corrected.contains("replaces #") && corrected.contains("5521"),
            "{name}: {corrected}"
        );
        assert!(h.dm("111", "ja").await.contains("It replaces #"), "{name}");
        let notes = kept(&h).await;
        assert!(
            notes.iter().any(|n| n.contains("0711 400 123"))
                && notes.iter().any(|n| n.contains("13:30"))
                && !notes.iter().any(|n| n.contains("5521")),
            "{name}: {notes:?}"
        );
        // The note says the new code where the old one stood.
        assert!(
            notes
                .iter()
                .any(|n| n.contains("Halle 3") && n.contains("8830")),
            "{name}: {notes:?}"
        );
        // A small model answering with the old code is not shown.
        fake.push(TEXT, Answer::Content("Der Code ist 5521.".into()));
        let code = h.dm("222", "Wie ist der Code fürs Lager?").await;
        assert!(
            code.contains("8830") && !code.contains("5521"),
            "{name}: {code}"
        );
    }
}

/// An amount asked with another language's word for the currency ("150
/// euros", "650 kroner") finds the note of its limit ("200 EUR", "800 kr"),
/// on the rules and on both databases.
#[tokio::test]
async fn an_amount_in_another_languages_currency_word_finds_its_limit() {
    for (name, db) in both_dbs().await {
        let h = Harness::on(db, steward::Config::default());
        h.pair("111", Role::Admin).await;
        h.pair("222", Role::User).await;
        for note in [
            "@notes: Anschaffungen bis 200 EUR brauchen keine Freigabe, darüber entscheidet Petra.",
            "@notes: Udlæg op til 800 kr kræver ingen godkendelse.",
        ] {
            assert!(h.dm("111", note).await.contains("(id: "), "{name}");
        }
        let limit = h
            .dm(
                "222",
                "¿Puedo comprar una lámpara de 150 euros sin preguntar a nadie?",
            )
            .await;
        assert!(limit.contains("200 EUR"), "{name}: {limit}");
        let kroner = h
            .dm("222", "Can I spend 650 kroner on flowers for the stand?")
            .await;
        assert!(kroner.contains("800 kr"), "{name}: {kroner}");
    }
}

/// How long a person wants their replies is one thing whatever the words:
/// a change of mind is asked as replacing the old wish and a yes leaves one;
/// a reason after a wish is part of it, and one detailed answer asked for is
/// no wish at all.
#[tokio::test]
async fn a_change_of_mind_about_reply_length_is_asked_as_replacing_the_old_one() {
    let fake = FakeLlm::start().await;
    fake.always("memory_items", small_model_extraction());
    fake.always(TEXT, Answer::Content("Okay.".into()));
    for (name, db) in both_dbs().await {
        let h = Harness::on(db, fake.config());
        h.pair("222", Role::User).await;
        h.pair("333", Role::User).await;
        let asked = h.dm("222", "Kurze Antworten sind mir lieber.").await;
        assert!(asked.contains("Remember this? "), "{name}: {asked}");
        assert!(h.dm("222", "ja").await.starts_with("Gespeichert"), "{name}");
        let changed = h
            .dm("222", "Hmm, doch lieber ausführliche Antworten, bitte.")
            .await;
        assert!(
            changed.contains("it conflicts with #") && changed.contains("Kurze Antworten"),
            "{name}: {changed}"
        );
        assert!(h.dm("222", "ja").await.contains("It replaces #"), "{name}");
        let theirs: Vec<String> = h
            .records()
            .await
            .into_iter()
            .filter(|r| {
                r.status == Status::Active && r.written.owner.as_deref() == Some("discord:222")
            })
            .map(|r| r.written.content)
            .collect();
        assert_eq!(theirs.len(), 1, "{name}: {theirs:?}");
        assert!(theirs[0].contains("ausführliche"), "{name}: {theirs:?}");
        let wish = h
            .dm(
                "333",
                "Could you keep your replies brief with me? Long answers lose me.",
            )
            .await;
        assert!(wish.contains("Remember this? "), "{name}: {wish}");
        let saved = h.dm("333", "yes").await;
        assert_eq!(saved.matches("(id: ").count(), 1, "{name}: {saved}");
        let one_answer = h
            .dm("333", "Give me a detailed answer about the parking rules.")
            .await;
        assert!(
            !one_answer.contains("Remember this?"),
            "{name}: {one_answer}"
        );
    }
}

/// A note shown as it was written, to someone answered in another language,
/// says the day it names in theirs too: the small model copies the note's
/// frame (the server stops at its close), steward shows the note, and the
/// Portuguese speaker reads "sexta" beside "fredag"; an English one, "Friday".
/// Who asked for a language reads their day beside any other, the model's own
/// sentence too.
#[tokio::test]
async fn a_day_a_note_names_is_said_in_the_speakers_language_too() {
    let fake = FakeLlm::start().await;
    fake.always("memory_items", small_model_extraction());
    for (name, db) in both_dbs().await {
        let h = Harness::on(db, fake.config());
        h.pair("111", Role::Admin).await;
        h.pair("222", Role::User).await;
        h.pair("333", Role::User).await;
        let noted = h
            .dm(
                "111",
                "@notes: Brannøvelse hver fredag kl. 09:30 ved hovedinngangen.",
            )
            .await;
        let id = receipt_id(&noted);
        assert!(
            h.dm("222", "Responde-me sempre em português, por favor")
                .await
                .contains("Remember this?"),
            "{name}"
        );
        assert!(h.dm("222", "sim").await.contains("(id: "), "{name}");
        let frame = format!(
            "<<<memory:{id} agent_notes: Brannøvelse hver fredag kl. 09:30 ved hovedinngangen."
        );
        fake.push(TEXT, Answer::Content(frame.clone()));
        let pt = h.dm("222", "Quando é o exercício de incêndio?").await;
        assert!(
            pt.contains("fredag (sexta") && pt.contains("09:30") && !pt.contains("<<<"),
            "{name}: {pt}"
        );
        fake.push(TEXT, Answer::Content(frame));
        let en = h
            .dm("333", "Which day of the week do we have the fire drill?")
            .await;
        assert!(en.contains("fredag (Friday)"), "{name}: {en}");
        // Asked for Portuguese, a model's own English sentence is glossed too.
        fake.push(
            TEXT,
            Answer::Content("The fire drill is every Friday at 09:30.".into()),
        );
        let own = h.dm("222", "Quando é o exercício de incêndio?").await;
        assert!(own.contains("Friday (sexta"), "{name}: {own}");
    }
}

/// A question with a one-word greeting beside it is one model call: "Moi!"
/// greets in Finnish (French "moi" is "me", yet one word says nothing of
/// the speaker), so no extraction call doubles the wait; a sentence of the
/// speaker's beside a question is still read.
#[tokio::test]
async fn a_greeting_beside_a_question_costs_no_extraction_call() {
    let fake = FakeLlm::start().await;
    fake.always("memory_items", small_model_extraction());
    fake.always(TEXT, Answer::Content("Okay.".into()));
    let h = Harness::with_config(fake.config()).await;
    h.pair("222", Role::User).await;
    h.dm("222", "Moi! Milloin huomisen palaveri alkaa?").await;
    assert!(fake.received_for("memory_items").is_empty());
    assert_eq!(fake.received_for(TEXT).len(), 1);
    h.dm(
        "222",
        "Mulla on kaksi koiraa kotona. Milloin huomisen palaveri alkaa?",
    )
    .await;
    assert_eq!(fake.received_for("memory_items").len(), 1);
}

/// A small model with no answer copies the first note it was shown, or
/// says the question back (Qwen2.5-Coder-1.5B did both for questions asked
/// in another language than the notes): neither is shown as the answer.
/// A copy of the first note about what is asked is.
#[tokio::test]
async fn a_copy_of_the_first_note_beside_the_question_or_the_question_said_back_is_no_answer() {
    let fake = FakeLlm::start().await;
    fake.always("memory_items", small_model_extraction());
    for (name, db) in both_dbs().await {
        let h = Harness::on(db, fake.config());
        h.pair("111", Role::Admin).await;
        h.pair("222", Role::User).await;
        let boat = "The rescue boat key hangs in the boathouse, hook 4.";
        let first = h.dm("111", &format!("@notes: {boat}")).await;
        let id = receipt_id(&first);
        h.dm(
            "111",
            "@notes: Lifeguard briefing every Sunday at 07:45 on the pier.",
        )
        .await;
        let frame = format!("<<<memory:{id} agent_notes: {boat}");
        // About neither note, in Czech: the first note copied is no answer.
        fake.push(TEXT, Answer::Content(frame.clone()));
        let wifi = h.dm("222", "Jaké je heslo k wifi v kanceláři?").await;
        assert!(!wifi.contains("hook 4"), "{name}: {wifi}");
        // The question said back, past its greeting: no answer either.
        fake.push(
            TEXT,
            Answer::Content("V kolik hodin je briefing plavčíků?".into()),
        );
        let said_back = h
            .dm("222", "Ahoj! V kolik hodin je briefing plavčíků?")
            .await;
        // The rules answer from the note the search found.
        assert!(
            !said_back.contains("V kolik hodin") && said_back.contains("07:45"),
            "{name}: {said_back}"
        );
        // About the boat's key, by its name: the copy is the answer.
        fake.push(TEXT, Answer::Content(frame));
        let boat_asked = h.dm("222", "Kde je klíč od člunu? Rescue boat.").await;
        assert!(boat_asked.contains("hook 4"), "{name}: {boat_asked}");
    }
}

/// A wish about replies said as a condition ("it would help me if you …"),
/// and a request whose verb of replying is an infinitive with its prefix
/// (Hebrew "לכתוב"), are asked; a yes followed by a verb of keeping keeps it,
/// and a no followed by its reason declines. A small model that says it
/// will do so is not believed. Phrased for this test.
#[tokio::test]
async fn a_wish_said_as_a_condition_is_asked_and_a_yes_with_a_verb_of_keeping_keeps_it() {
    let fake = FakeLlm::start().await;
    fake.always("memory_items", small_model_extraction());
    fake.always(
        TEXT,
        Answer::Content("Of course, I will answer like that from now on.".into()),
    );
    for (name, db) in both_dbs().await {
        let h = Harness::on(db, fake.config());
        for (user, wish, answer, keeps) in [
            (
                "201",
                "Було б чудово, якщо ти відповідатимеш мені стисло.",
                "так, запиши це собі",
                true,
            ),
            (
                "202",
                "Bardzo by mi pomogło, gdybyś odpowiadał w punktach.",
                "nie, jednak nie — to tylko na ten tydzień",
                false,
            ),
            (
                "203",
                "אפשר לכתוב לי תמיד בעברית?",
                "כן, תשמור לי את זה",
                true,
            ),
            (
                "204",
                "Honestly it'd save me time if you replied in short bullet points.",
                "yes, please save this one for me",
                true,
            ),
        ] {
            h.pair(user, Role::User).await;
            let asked = h.dm(user, wish).await;
            assert!(asked.contains("Remember this?"), "{name}: {wish}: {asked}");
            let answered = h.dm(user, answer).await;
            assert_eq!(
                answered.contains("(id: "),
                keeps,
                "{name}: {answer}: {answered}"
            );
        }
        let active = kept(&h).await;
        assert_eq!(active.len(), 3, "{name}: {active:?}");
    }
}

/// A correction that changes one value of a note holding several is kept as
/// that note with the new value (the old lives in the revision), without its
/// heading, though a pattern named its subject in other words than the
/// note's; a question after it gets the new value, and the note's other
/// values still answer theirs.
#[tokio::test]
async fn a_correction_of_one_value_keeps_the_rest_of_its_note() {
    let fake = answering_okay().await;
    for (name, db) in both_dbs().await {
        let h = Harness::on(db, fake.config());
        h.pair("111", Role::Admin).await;
        h.pair("222", Role::User).await;
        h.dm(
            "111",
            "@notes: The night ferry to Vardø leaves at 23:15 and 01:40; 80 NOK per person, skipper Ivar Moe, +47 915 22 310.",
        )
        .await;
        let kept_now = h
            .dm(
                "111",
                "@notes: correction : the night ferry is now 95 NOK per person.",
            )
            .await;
        assert!(kept_now.contains("replaces #"), "{name}: {kept_now}");
        let notes = kept(&h).await;
        assert_eq!(
            notes,
            vec![
                "The night ferry to Vardø leaves at 23:15 and 01:40; 95 NOK per person, skipper Ivar Moe, +47 915 22 310."
                    .to_string()
            ],
            "{name}"
        );
        let fare = h.dm("222", "How much is the night ferry per person?").await;
        assert!(
            fare.contains("95 NOK") && !fare.contains("80 NOK"),
            "{name}: {fare}"
        );
        let leaves = h.dm("222", "When does the night ferry leave?").await;
        assert!(leaves.contains("23:15"), "{name}: {leaves}");
    }
}

/// A rule told to everyone ("Heads up everyone — … Please remind your
/// guests.") asks the agent nothing: it is answered by "Remember this?"
/// alone, with no model call and no note beside it, and a "yes" keeps it.
#[tokio::test]
async fn a_rule_told_to_everyone_is_asked_alone_without_a_note_beside_it() {
    let fake = answering_okay().await;
    for (name, db) in both_dbs().await {
        let h = Harness::on(db, fake.config());
        h.pair("111", Role::Admin).await;
        h.dm(
            "111",
            "@notes: The print room on floor 2 is serviced every Thursday by CopyFix; contract CF-118.",
        )
        .await;
        fake.clear_received();
        let asked = h
            .dm(
                "111",
                "Heads up everyone — from now on the bike room on floor 2 is locked after 20:00. Please remind your guests.",
            )
            .await;
        assert!(asked.starts_with("Remember this? "), "{name}: {asked}");
        assert!(
            !asked.contains("CopyFix") && !asked.contains("Memory says"),
            "{name}: {asked}"
        );
        assert!(fake.received_for(TEXT).is_empty(), "{name}: a reply call");
        let receipt = h.dm("111", "yes").await;
        assert!(receipt.contains("agent_notes"), "{name}: {receipt}");
        assert!(kept(&h).await.iter().any(|k| k.contains("20:00")), "{name}");
    }
}

/// A one-off the speaker tells ("Today I paid …"), in a sentence that opens
/// with its day, is neither kept, asked nor refused as a claim, and is not
/// answered with a note beside it; a question about the note still is.
#[tokio::test]
async fn a_one_off_told_is_not_answered_with_a_note_beside_it() {
    let fake = answering_okay().await;
    for (name, db) in both_dbs().await {
        let h = Harness::on(db, fake.config());
        h.pair("111", Role::Admin).await;
        h.pair("222", Role::User).await;
        h.dm(
            "111",
            "@notes: La mensajería del piso 2 se paga de la caja chica; el mostrador abre a las 08:00.",
        )
        .await;
        for told in [
            "Hoy he pagado 30 EUR de mensajería porque la impresora del piso 2 estaba rota.",
            "Hôm nay máy in tầng 2 bị hỏng, tôi đã trả 30 EUR cho người giao hàng.",
        ] {
            let reply = h.dm("222", told).await;
            assert!(
                !reply.contains("Memory says")
                    && !reply.contains("08:00")
                    && !reply.contains("Remember this?")
                    && !reply.contains("need an administrator"),
                "{name}: {told}: {reply}"
            );
        }
        assert_eq!(kept(&h).await.len(), 1, "{name}");
        let asked = h
            .dm("222", "¿A qué hora abre el mostrador de la mensajería?")
            .await;
        assert!(asked.contains("08:00"), "{name}: {asked}");
    }
}
