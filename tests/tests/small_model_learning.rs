//! The agent on a small model (ARCHITECTURE.md, "The turn on a real model"):
//! against the fake OpenAI-compatible server, a model that elaborates,
//! repeats, mislabels and writes tool calls as text. Each test asserts what
//! the person sees.
//!
//! Here, what is learned: nothing kept that the person did not say, a "yes"
//! saving what was asked, in the person's language, and standing rules,
//! preferences and one-off events told apart.

use memory::{Role, Scope, Status};
use serde_json::json;
use steward::turn::LAPSED;
use steward::Config;
use steward_tests::fake_llm::{small_model_extraction, Answer, FakeLlm, TEXT};
use steward_tests::small_model::harness;
use steward_tests::Harness;

fn items(list: serde_json::Value) -> Answer {
    Answer::Json(json!({ "items": list }))
}

/// The active records.
async fn active(h: &Harness) -> Vec<memory::MemoryRecord> {
    h.records()
        .await
        .into_iter()
        .filter(|r| r.status == Status::Active)
        .collect()
}

/// Every record's text, whatever its status.
async fn texts(h: &Harness) -> Vec<String> {
    h.records()
        .await
        .into_iter()
        .map(|r| r.written.content)
        .collect()
}

#[tokio::test]
async fn an_elaborating_model_keeps_only_the_speakers_words() {
    let fake = FakeLlm::start().await;
    fake.always("memory_items", small_model_extraction());
    let h = harness(&fake).await;
    h.pair("111", Role::Admin).await;
    let said =
        "From now on, the on-call rotation is published in #ops-oncall every Friday at 16:00.";
    let asked = h.dm("111", said).await;
    // Asked with the admin's words only: none of the model's additions.
    assert!(
        asked.contains(
            "Remember this? The on-call rotation is published in #ops-oncall every Friday at 16:00 — reply yes or no"
        ),
        "{asked}"
    );
    for invented in [
        "one-off",
        "requesting",
        "Berlin",
        "finance",
        "The user said",
    ] {
        assert!(!asked.contains(invented), "{invented} in {asked}");
    }
    let yes = h.dm("111", "yes").await;
    assert!(yes.starts_with("Written: agent_notes updated"), "{yes}");
    let kept = active(&h).await;
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(
        kept[0].content,
        "The on-call rotation is published in #ops-oncall every Friday at 16:00"
    );
    assert_eq!(kept[0].scope, Scope::AgentNotes);
    // Nothing else was ever proposed or stored.
    assert_eq!(texts(&h).await.len(), 1, "{:?}", texts(&h).await);
}

#[tokio::test]
async fn a_question_beside_a_statement_is_answered_and_only_the_statement_is_read() {
    let fake = FakeLlm::start().await;
    fake.always("memory_items", small_model_extraction());
    fake.push(
        TEXT,
        // No value of its own: a value no note holds is not shown.
        Answer::Content("Use the VPN client from the IT portal.".into()),
    );
    let h = harness(&fake).await;
    h.pair("222", Role::User).await;
    let reply = h
        .dm(
            "222",
            "Hi, my desk is on the third floor. How do I connect to the VPN?",
        )
        .await;
    // Answer first, the question after it, in the speaker's words (the
    // model's operational label notwithstanding: said of themselves).
    assert!(
        reply.starts_with("Use the VPN client from the IT portal."),
        "{reply}"
    );
    assert!(
        reply.ends_with("Remember this? My desk is on the third floor — reply yes or no"),
        "{reply}"
    );
    let extraction = fake.received_for("memory_items");
    assert_eq!(extraction.len(), 1);
    let read = steward_tests::fake_llm::last_user_text(&extraction[0].body);
    assert_eq!(read, "my desk is on the third floor.");

    // A statement the rules know needs no model: no extraction call.
    fake.clear_received();
    fake.push(TEXT, Answer::Content("Noted.".into()));
    let reply = h
        .dm("222", "I work from the Lisbon office. Where is the VPN?")
        .await;
    assert!(
        reply.ends_with("Remember this? Works from the Lisbon office — reply yes or no"),
        "{reply}"
    );
    assert!(fake.received_for("memory_items").is_empty());
    assert_eq!(fake.received().len(), 1);
}

#[tokio::test]
async fn yes_saves_the_question_just_asked_and_a_passed_over_one_lapses() {
    let fake = FakeLlm::start().await;
    // Mislabelled operational: the rules know a preference of the speaker's own.
    fake.always(
        "memory_items",
        Answer::From(std::sync::Arc::new(|body: &serde_json::Value| {
            let text = steward_tests::fake_llm::last_user_text(body);
            items(json!([{"channel": "operational", "kind": "rule", "subject": "language", "content": text}]))
        })),
    );
    fake.always(TEXT, Answer::Content("Sure.".into()));
    let h = harness(&fake).await;
    h.pair("222", Role::User).await;

    // Nothing asked yet.
    assert_eq!(
        h.dm("222", "yes").await,
        "There is nothing waiting for a yes or no."
    );

    // Asked, then passed over: the yes after another message saves nothing.
    let asked = h.dm("222", "I prefer short answers").await;
    assert!(
        asked.contains("Remember this? Prefers short answers"),
        "{asked}"
    );
    let answered = h.dm("222", "What is the expense limit for 740 EUR?").await;
    assert!(!answered.contains("Remember this?"), "{answered}");
    assert_eq!(h.dm("222", "yes").await, LAPSED);
    assert!(h.records().await.iter().all(|r| r.status != Status::Active));

    // Asked and answered at once: saved, personal, whatever the model's label.
    let asked = h
        .dm(
            "222",
            "Please answer me in Portuguese from now on, I read it faster",
        )
        .await;
    assert!(
        asked.contains("Remember this? Wants answers in Portuguese — reply yes or no"),
        "{asked}"
    );
    let yes = h.dm("222", "yes").await;
    assert!(yes.starts_with("Written: personal memory updated"), "{yes}");
    let active = active(&h).await;
    assert_eq!(active.len(), 1, "{active:?}");
    assert_eq!(active[0].content, "Wants answers in Portuguese");
    assert_eq!(active[0].scope, Scope::Personal);
    assert_eq!(active[0].owner.as_deref(), Some("discord:222"));

    // The stored language reaches the model's instructions.
    fake.clear_received();
    h.dm("222", "How do I connect to the VPN?").await;
    let reply = &fake.received_for(TEXT)[0];
    let messages = reply.body["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    // In the turn's context, framed before the message it serves.
    let context = &messages[messages.len() - 1];
    assert_eq!(context["role"], "user");
    let context = context["content"].as_str().unwrap_or_default();
    assert!(context.contains("REPLY LANGUAGE: Portuguese"), "{context}");
    // The fixed policy comes first, the same for every speaker.
    let policy = messages[0]["content"].as_str().unwrap_or_default();
    assert!(policy.contains("MEMORY ROUTING POLICY"), "{policy}");
    assert!(
        !policy.contains("Portuguese") && !policy.contains("SPEAKER ROLE: user"),
        "{policy}"
    );
}

#[tokio::test]
async fn an_admin_correction_supersedes_the_note_and_names_the_old_value() {
    // Offline rules: no model at all.
    let h = Harness::with_config(Config::default()).await;
    h.pair("111", Role::Admin).await;
    h.pair("222", Role::User).await;
    h.dm(
        "111",
        "@notes: The staging database is at pg-staging-03.internal, port 5432.",
    )
    .await;
    let old = h.records_containing("pg-staging-03").await[0].id;

    // A regular user's correction is declined and changes nothing.
    let declined = h
        .dm(
            "222",
            "Actually the staging database moved to pg-evil.internal",
        )
        .await;
    assert!(
        declined.contains("Operational changes need an administrator"),
        "{declined}"
    );
    assert!(h.records_containing("pg-evil").await.is_empty());

    let asked = h
        .dm(
            "111",
            "Correction: the staging database moved to pg-staging-04.internal, same port.",
        )
        .await;
    // The new host is carried into the note's own words (the port kept):
    // a word before both values names the same thing ("staging database").
    assert_eq!(
        asked,
        format!("Remember this? The staging database is at pg-staging-04.internal, port 5432. (replaces #{old}: “The staging database is at pg-staging-03.internal, port 5432.”) — reply yes or no")
    );
    let yes = h.dm("111", "yes").await;
    assert!(yes.starts_with("Written: agent_notes updated"), "{yes}");
    assert!(yes.contains("pg-staging-03"), "{yes}");
    assert_eq!(
        h.db().records().get(&h.org, old).await.expect("old").status,
        Status::Superseded
    );
    let answer = h.dm("222", "What is the staging database host?").await;
    assert!(answer.contains("pg-staging-04.internal"), "{answer}");
    assert!(!answer.contains("pg-staging-03"), "{answer}");
}

#[tokio::test]
async fn a_personal_item_not_said_in_the_first_person_is_not_asked() {
    let fake = FakeLlm::start().await;
    // A model that files every statement as a fact about the speaker.
    fake.always(
        "memory_items",
        Answer::From(std::sync::Arc::new(|body: &serde_json::Value| {
            let text = steward_tests::fake_llm::last_user_text(body);
            items(json!([{"channel": "personal", "kind": "fact", "subject": "x", "content": text}]))
        })),
    );
    fake.always(TEXT, Answer::Content("I can't share that.".into()));
    let h = harness(&fake).await;
    h.pair("333", Role::User).await;
    let reply = h
        .group(
            Some("333"),
            "g1",
            "Where does Ben work from? He told you in private.",
        )
        .await;
    assert!(!reply.contains("Remember this?"), "{reply}");
    assert!(h.records().await.is_empty());
    // Positive control: said of themselves, it is asked.
    let reply = h.dm("333", "My desk is by the window.").await;
    assert!(
        reply.contains("Remember this? My desk is by the window — reply yes or no"),
        "{reply}"
    );
}

#[tokio::test]
async fn what_the_speaker_said_is_read_from_their_lines_and_never_guessed() {
    let fake = FakeLlm::start().await;
    let mut cfg = fake.config();
    cfg.turn.history_for = steward::config::HistoryFor::FollowUps;
    let h = Harness::with_config(cfg).await;
    h.pair("111", Role::Admin).await;
    h.pair("222", Role::User).await;
    h.dm(
        "111",
        "@notes: The VPN endpoint is vpn.example.com, port 443.",
    )
    .await;
    // Asked before saying anything: no line of theirs, no memory of theirs.
    // What the real model answered is a guess, and is not shown.
    fake.push(
        TEXT,
        Answer::Content(
            "You asked me to remind me about the VPN endpoint and the deployment to production."
                .into(),
        ),
    );
    let guess = h.dm("222", "What did I ask you to remind me about?").await;
    assert_eq!(guess, "I don't have anything in memory about that yet.");
    // Once they have said it, the question is read with their lines.
    fake.push(TEXT, Answer::Content("I can't set reminders.".into()));
    h.dm("222", "Remind me to renew my badge on Friday.").await;
    let answer = "You asked me to remind you to renew your badge on Friday.";
    fake.push(TEXT, Answer::Content(answer.into()));
    fake.clear_received();
    let reply = h.dm("222", "What did I ask you to remind me about?").await;
    assert_eq!(reply, answer);
    assert!(
        fake.received_for(TEXT)[0]
            .text()
            .contains("renew my badge on Friday"),
        "{}",
        fake.received_for(TEXT)[0].body
    );
}

#[tokio::test]
async fn a_judge_is_never_shown_a_record_on_another_topic() {
    let fake = FakeLlm::start().await;
    // A judge that retires whatever it is shown.
    fake.always(
        "belief_revision",
        Answer::Json(json!({"retire": [{"id": 1, "reason": "replaced"}]})),
    );
    let h = harness(&fake).await;
    h.pair("111", Role::Admin).await;
    h.dm(
        "111",
        "@notes: The VPN endpoint is vpn.example.com, port 443.",
    )
    .await;
    h.dm(
        "111",
        "@notes: Deploys to production need a second reviewer and happen only before 15:00.",
    )
    .await;
    assert!(fake.received_for("belief_revision").is_empty());
    assert_eq!(active(&h).await.len(), 2);
    // Positive control: a note sharing a word with it is judged (and retired).
    h.dm(
        "111",
        "@notes: Remote access goes through the VPN at vpn2.example.com",
    )
    .await;
    assert_eq!(fake.received_for("belief_revision").len(), 1);
    assert!(active(&h)
        .await
        .iter()
        .all(|r| !r.content.contains("vpn.example.com")));
}

// --- issue 46: conversations written by someone else ---------------------------

/// The record a reply's receipt `(id: N)` names.
async fn receipted(h: &Harness, reply: &str) -> memory::MemoryRecord {
    let id: i64 = reply
        .split("(id: ")
        .nth(1)
        .and_then(|r| r.split(')').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no receipt in {reply}"));
    h.records()
        .await
        .into_iter()
        .find(|r| r.id == id)
        .unwrap_or_else(|| panic!("no record {id}"))
}

#[tokio::test]
async fn yes_and_no_in_the_persons_language_answer_the_question_and_the_model_never_does() {
    let fake = FakeLlm::start().await;
    // A model that would take "ja" for a request and promise.
    fake.always(
        TEXT,
        Answer::Content("Ja, ich werde alle Antworten auf Deutsch geben.".into()),
    );
    let h = harness(&fake).await;
    h.pair("222", Role::User).await;
    let asked = h.dm("222", "Bitte antworte mir immer auf Deutsch").await;
    assert_eq!(
        asked,
        "Remember this? Wants answers in Deutsch — reply yes or no"
    );
    let yes = h.dm("222", "ja").await;
    assert!(
        yes.starts_with("Gespeichert: personal memory aktualisiert (id: "),
        "{yes}"
    );
    let kept = receipted(&h, &yes).await;
    assert_eq!(
        (kept.content.as_str(), kept.status),
        ("Wants answers in Deutsch", Status::Active)
    );
    // Steward answered the yes; the model was never asked, so promised nothing.
    assert!(fake.received_for(TEXT).is_empty());

    // Yes in eight more languages, each saving what it was asked.
    for (language, yes, receipt) in [
        ("French", "oui", "Enregistré"),
        ("Spanish", "¡Sí!", "Guardado"),
        ("Portuguese", "sim", "Guardado"),
        ("Japanese", "はい", "保存しました"),
        ("Russian", "да", "Сохранено"),
        ("Polish", "tak", "Zapisano"),
        ("Turkish", "evet", "Kaydedildi"),
        ("Italian", "sì", "Salvato"),
    ] {
        let asked = h
            .dm("222", &format!("Could you always answer me in {language}?"))
            .await;
        assert!(
            asked.contains(&format!("Remember this? Wants answers in {language}")),
            "{asked}"
        );
        let saved = h.dm("222", yes).await;
        assert!(saved.starts_with(receipt), "{yes}: {saved}");
        assert_eq!(
            receipted(&h, &saved).await.content,
            format!("Wants answers in {language}")
        );
    }
    // No, in the language it is said in; nothing kept.
    h.dm("222", "Could you always answer me in Dutch?").await;
    assert_eq!(
        h.dm("222", "Nein, danke.").await,
        "In Ordnung, das merke ich mir nicht."
    );
    assert!(h
        .records_containing("Dutch")
        .await
        .iter()
        .all(|r| r.status != Status::Active));
    assert_eq!(
        h.dm("222", "hayır").await,
        "Evet ya da hayır bekleyen bir soru yok."
    );
    assert!(fake.received_for(TEXT).is_empty());
}

#[tokio::test]
async fn a_preference_asked_as_a_question_is_proposed_after_the_answer_and_never_promised() {
    let fake = FakeLlm::start().await;
    fake.always("memory_items", small_model_extraction());
    let h = harness(&fake).await;
    h.pair("111", Role::Admin).await;
    h.pair("222", Role::User).await;
    h.dm(
        "111",
        "@notes: The VPN endpoint is vpn.example.com, port 443.",
    )
    .await;
    fake.push(
        TEXT,
        Answer::Content(
            "Sure, I will always reply to you in French. The VPN endpoint is vpn.example.com, port 443."
                .into(),
        ),
    );
    let reply = h
        .dm(
            "222",
            "Could you always answer me in French? And what is the VPN endpoint?",
        )
        .await;
    // Answered, the promise left out, and the preference asked after the answer.
    assert!(reply.contains("vpn.example.com"), "{reply}");
    assert!(!reply.contains("I will always"), "{reply}");
    assert!(reply.contains("I keep it only if you say yes."), "{reply}");
    assert!(
        reply.ends_with("Remember this? Wants answers in French — reply yes or no"),
        "{reply}"
    );
    // One model call: the reply. The rules read the preference.
    assert_eq!(fake.received().len(), 1, "{:?}", fake.received());
    assert!(h
        .dm("222", "yes")
        .await
        .starts_with("Written: personal memory updated"));

    // Requests and questions in other words and languages are asked too.
    for (said, kept) in [
        (
            "Can you please keep your answers short from now on?",
            "Wants you to keep your answers short from now on",
        ),
        (
            "Would you mind always using metric units?",
            "Prefers always using metric units",
        ),
        (
            "¿Puedes responderme siempre en español?",
            "Wants answers in Español",
        ),
    ] {
        let asked = h.dm("222", said).await;
        // (Español names the French it would replace.)
        assert!(
            asked.starts_with(&format!("Remember this? {kept}")),
            "{asked}"
        );
        assert!(h.dm("222", "yes").await.contains("(id: "), "{said}");
        assert!(active(&h).await.iter().any(|r| r.content == kept), "{said}");
    }

    // A model promising what nothing asked or saved is not believed.
    fake.clear_received();
    fake.push(
        TEXT,
        Answer::Content("Sure, I'll remember that and always answer in bullet points.".into()),
    );
    let promised = h.dm("222", "Can you answer this in bullet points?").await;
    assert!(!promised.contains("I'll remember"), "{promised}");
    assert!(
        promised.contains("Nothing was saved for later"),
        "{promised}"
    );
    assert!(!promised.contains("Remember this?"), "{promised}");
}

#[tokio::test]
async fn an_admins_standing_rule_in_any_phrasing_is_an_agent_note_and_a_users_is_explained() {
    let fake = FakeLlm::start().await;
    // A model that takes every rule for the speaker's own preference.
    fake.always(
        "memory_items",
        items(
            json!([{"channel": "personal", "kind": "preference", "subject": "digest",
            "content": "Wants you to always use example_orders for the weekly digest"}]),
        ),
    );
    let h = harness(&fake).await;
    h.pair("111", Role::Admin).await;
    h.pair("222", Role::User).await;
    for (said, kept) in [
        (
            "Always use example_orders for the weekly digest",
            "Always use example_orders for the weekly digest",
        ),
        (
            "rule: always use example_archive for the monthly digest",
            "Always use example_archive for the monthly digest",
        ),
        (
            "Policy: the quarterly digest is built from sales_2026",
            "The quarterly digest is built from sales_2026",
        ),
        (
            "Make sure you always use pg-replica-02 for the nightly export",
            "Always use pg-replica-02 for the nightly export",
        ),
        (
            "Please remember for everyone: the incident review is built from incidents_2026",
            "The incident review is built from incidents_2026",
        ),
        (
            "Team rule — deploys need a second reviewer",
            "Deploys need a second reviewer",
        ),
    ] {
        fake.clear_received();
        let asked = h.dm("111", said).await;
        // One model call a message at most (a rule the rules key needs none).
        assert!(fake.received().len() <= 1, "{said}");
        assert_eq!(
            asked,
            format!("Remember this? {kept} — reply yes or no"),
            "{said}"
        );
        let yes = h.dm("111", "yes").await;
        assert!(yes.starts_with("Written: agent_notes updated"), "{yes}");
        let note = receipted(&h, &yes).await;
        assert_eq!(
            (note.scope, note.content.as_str()),
            (Scope::AgentNotes, kept)
        );

        // The same words from a regular user change nothing, and say so.
        let before = h.records().await.len();
        let told = h.dm("222", said).await;
        assert!(
            told.contains("Operational changes need an administrator"),
            "{said}: {told}"
        );
        assert!(!told.contains("Remember this?"), "{told}");
        assert_eq!(h.records().await.len(), before, "{said}");
    }
    // Nothing was personal, whatever the model's label.
    assert!(h
        .records()
        .await
        .iter()
        .all(|r| r.scope == Scope::AgentNotes));
}

#[tokio::test]
async fn a_one_off_event_is_answered_and_nothing_is_proposed() {
    let fake = FakeLlm::start().await;
    // A model that would keep the event.
    fake.always(
        "memory_items",
        items(
            json!([{"channel": "personal", "kind": "fact", "subject": "ticket",
            "content": "I spent 740 EUR on a conference ticket"}]),
        ),
    );
    let h = harness(&fake).await;
    h.pair("111", Role::Admin).await;
    h.pair("222", Role::User).await;
    h.dm(
        "111",
        "@notes: Expenses over 500 EUR are signed off by the team lead.",
    )
    .await;
    for said in [
        "I spent 740 EUR on a conference ticket. Who has to sign that off?",
        "I booked a flight to Madrid this morning. Who has to sign that off?",
    ] {
        fake.clear_received();
        fake.push(
            TEXT,
            Answer::Content("Expenses over 500 EUR are signed off by the team lead.".into()),
        );
        let reply = h.dm("222", said).await;
        assert!(reply.contains("signed off by the team lead"), "{reply}");
        assert!(!reply.contains("Remember this?"), "{reply}");
        // One call, the answer; the event was never sent to be read for memory.
        assert_eq!(fake.received().len(), 1, "{:?}", fake.received());
        assert!(fake.received_for("memory_items").is_empty());
    }
    assert_eq!(h.records().await.len(), 1, "only the admin's note");
}

/// "ja" is German, Dutch and Swedish: from a person who asked to be answered
/// in Dutch it is Dutch, and so is the receipt.
#[tokio::test]
async fn a_yes_two_languages_share_is_answered_in_the_persons_own() {
    let fake = FakeLlm::start().await;
    let h = harness(&fake).await;
    h.pair("222", Role::User).await;
    h.dm("222", "Could you always answer me in Dutch?").await;
    h.dm("222", "yes").await;
    let asked = h
        .dm("222", "Can you please keep your answers short from now on?")
        .await;
    assert!(asked.contains("Remember this?"), "{asked}");
    let saved = h.dm("222", "ja").await;
    assert!(saved.starts_with("Opgeslagen: "), "{saved}");
    assert!(fake.received_for(TEXT).is_empty());
}

/// The lexicon's classes on the wire (docs/models.md, "Every language the
/// same way"): a model that would promise each time, and steward instead
/// proposing what was asked — a reply language asked in Danish and answered
/// "ja" in Danish, a name asked for after "Actually,", a reply language said
/// with what one prefers — and a one-off act in a language that drops its
/// pronouns never proposed. Each phrased for this test.
#[tokio::test]
async fn requests_in_the_lexicons_languages_are_proposed_and_yes_is_read_in_the_language_asked_for()
{
    let fake = FakeLlm::start().await;
    fake.always(
        TEXT,
        Answer::Content("Selvfølgelig, det vil jeg altid gøre.".into()),
    );
    let h = harness(&fake).await;
    h.pair("222", Role::User).await;
    let asked = h
        .dm("222", "Kunne du fremover skrive til mig på dansk?")
        .await;
    assert!(
        asked.contains("Remember this? Wants answers in Dansk"),
        "{asked}"
    );
    // "ja" is German first in the table; answering a question about Danish it is Danish.
    let yes = h.dm("222", "ja").await;
    assert!(yes.starts_with("Gemt: "), "{yes}");
    assert_eq!(receipted(&h, &yes).await.content, "Wants answers in Dansk");

    for (said, kept) in [
        ("Actually, please call me Rikke", "Wants to be called Rikke"),
        ("Preferirei risposte in tedesco", "Wants answers in Tedesco"),
    ] {
        let asked = h.dm("222", said).await;
        assert!(
            asked.contains(&format!("Remember this? {kept}")),
            "{said}: {asked}"
        );
        let saved = h.dm("222", "yes").await;
        assert_eq!(receipted(&h, &saved).await.content, kept, "{said}");
    }
    fake.clear_received();
    let reply = h
        .dm(
            "222",
            "Comprei hoje um teclado por 40 EUR. Onde fica a impressora?",
        )
        .await;
    assert!(!reply.contains("Remember this?"), "{reply}");
    assert!(fake.received_for("memory_items").is_empty());
    assert!(!texts(&h).await.iter().any(|t| t.contains("teclado")));
}

/// Issue 46: a request about how the agent answers the speaker, asked
/// without any standing word, is proposed on a model too — the rules read
/// it before the model's reply, so a model that only says "Of course" or
/// promises nothing still has it asked, and a "yes" keeps the speaker's
/// words. Phrased for this test, in words and languages no transcript holds.
#[tokio::test]
async fn a_request_about_how_to_answer_without_a_standing_word_is_proposed() {
    let fake = FakeLlm::start().await;
    fake.always(TEXT, Answer::Content("Of course.".into()));
    // An extractor that finds nothing: the rules' reading is not lost to it.
    fake.always("memory_items", items(json!([])));
    let h = harness(&fake).await;
    h.pair("222", Role::User).await;
    for (said, kept) in [
        ("No emoticons for me, thanks", "No emoticons for me, thanks"),
        (
            "Пиши мне коротко, пожалуйста",
            "Пиши мне коротко, пожалуйста",
        ),
        (
            "Antworte mir bitte auf Englisch",
            "Wants answers in Englisch",
        ),
    ] {
        let asked = h.dm("222", said).await;
        assert!(
            asked.contains(&format!("Remember this? {kept} — reply yes or no")),
            "{said}: {asked}"
        );
        let yes = h.dm("222", "yes").await;
        assert_eq!(receipted(&h, &yes).await.content, kept, "{said}");
    }
    // A thing to write for the speaker is a task: answered, nothing asked.
    let task = h
        .dm("222", "Can you write me a short summary of the release?")
        .await;
    assert!(!task.contains("Remember this?"), "{task}");
}

/// Issue 46: a personal fact that changes — the unit a person works in —
/// is proposed, and the new one is asked as a contradiction naming the old
/// (a judge that sees no conflict does not keep both silently); "yes"
/// replaces it, so the next answer has only the new unit. Phrased for this test.
#[tokio::test]
async fn a_changed_unit_at_work_is_asked_as_a_contradiction_and_yes_replaces_it() {
    let fake = FakeLlm::start().await;
    fake.always("memory_items", items(json!([])));
    fake.always("belief_revision", Answer::Json(json!({"retire": []})));
    let h = harness(&fake).await;
    h.pair("222", Role::User).await;
    let asked = h.dm("222", "By the way I'm on the billing team").await;
    assert!(
        asked.contains("Remember this? I'm on the billing team — reply yes or no"),
        "{asked}"
    );
    let first = receipted(&h, &h.dm("222", "yes").await).await;
    let changed = h
        .dm(
            "222",
            "Quick update: I joined the platform squad this month",
        )
        .await;
    assert!(
        changed.contains(&format!(
            "I joined the platform squad this month (it conflicts with #{}: “I'm on the billing team”",
            first.id
        )),
        "{changed}"
    );
    let yes = h.dm("222", "yes").await;
    assert!(yes.contains(&format!("It replaces #{}", first.id)), "{yes}");
    let kept: Vec<String> = active(&h).await.iter().map(|r| r.content.clone()).collect();
    assert_eq!(kept, vec!["I joined the platform squad this month"]);
}

/// Issue 46: an administrator's plain statement of a deadline, an
/// obligation or a limit — its subject opening with a word that is also a
/// verb of a request ("Print quota …") — is a standing note asked
/// "Remember this?", not a question answered. Phrased for this test.
#[tokio::test]
async fn an_admins_plain_deadline_or_obligation_is_asked_not_answered() {
    let fake = FakeLlm::start().await;
    fake.always(TEXT, Answer::Content("Noted.".into()));
    fake.always("memory_items", items(json!([])));
    let h = harness(&fake).await;
    h.pair("111", Role::Admin).await;
    for said in [
        "Print quota for interns is 200 pages a month",
        "Everyone has to submit timesheets in Clockify by Monday 09:00",
    ] {
        let asked = h.dm("111", said).await;
        assert!(
            asked.contains(&format!("Remember this? {said} — reply yes or no")),
            "{said}: {asked}"
        );
        let yes = h.dm("111", "yes").await;
        assert!(yes.starts_with("Written: agent_notes updated"), "{yes}");
    }
}

/// Issue 46: what a person says of themselves beside something else — a
/// workplace before a question (a dash), their manager, a time zone, a form
/// right before "with me", a wish with its reason — is proposed on a model
/// too, once each, after the answer; "yes" keeps the speaker's words. A thing
/// shared "with me" is a task. Phrased for this test, in words and languages
/// no transcript holds.
#[tokio::test]
async fn what_a_person_says_of_themselves_beside_something_else_is_proposed_once() {
    let fake = FakeLlm::start().await;
    fake.always(TEXT, Answer::Content("Sure.".into()));
    // An extractor that finds nothing: the rules' reading is not lost to it.
    fake.always("memory_items", items(json!([])));
    let h = harness(&fake).await;
    h.pair("111", Role::Admin).await;
    h.dm("111", "@notes: The label printer queue is LBL-7.")
        .await;
    h.pair("222", Role::User).await;
    for (said, kept) in [
        (
            "Trabajo en la sucursal de Triana — ¿cuál es la cola de la impresora de etiquetas?",
            "Trabajo en la sucursal de Triana",
        ),
        ("my boss is Carla Mendes, fyi", "My boss is Carla Mendes"),
        ("Bitte Zeiten für mich in UTC+2", "Wants times in UTC+2"),
        // Not a length: a second one of the same person's is a change of it.
        (
            "Kun je wat formeler zijn met mij?",
            "Kun je wat formeler zijn met mij",
        ),
        (
            "could you keep it brief with me? long replies tire me out",
            "Wants you to keep it brief with me — long replies tire me out",
        ),
    ] {
        let asked = h.dm("222", said).await;
        assert_eq!(
            asked.matches("Remember this?").count(),
            1,
            "{said}: {asked}"
        );
        assert!(
            asked.contains(&format!("Remember this? {kept} — reply yes or no")),
            "{said}: {asked}"
        );
        let yes = h.dm("222", "yes").await;
        assert_eq!(receipted(&h, &yes).await.content, kept, "{said}");
    }
    let task = h.dm("222", "Can you share the short report with me?").await;
    assert!(!task.contains("Remember this?"), "{task}");
}

/// Issue 46: a regular user's question beside statements the rules do not
/// know and that are not of themselves — a one-off, a mood — is answered
/// with one model call: nothing is extracted, asked or refused, whatever an
/// extractor would have labelled (this one labels every line operational).
/// An administrator's statements beside a question are still read by the
/// extractor: they may be rules. (A user's statement with a value in it —
/// "route 9" — beside their question is its context, not a claim: nothing is
/// explained; `policy_matrix.rs`.)
#[tokio::test]
async fn a_users_question_beside_an_unknown_statement_makes_one_call() {
    let fake = FakeLlm::start().await;
    fake.always("memory_items", small_model_extraction());
    fake.always(
        TEXT,
        Answer::Content("Up to 48 hours before the shift.".into()),
    );
    let h = harness(&fake).await;
    h.pair("111", Role::Admin).await;
    h.dm(
        "111",
        "@notes: Drivers can swap shifts up to 48 hours before the shift starts.",
    )
    .await;
    h.pair("222", Role::User).await;
    let reply = h
        .dm(
            "222",
            "Rough morning on the ring road, total chaos. How late can I still swap a shift?",
        )
        .await;
    assert!(reply.contains("48 hours"), "{reply}");
    assert!(!reply.contains("Remember this?"), "{reply}");
    assert!(!reply.contains("Operational changes"), "{reply}");
    assert_eq!(fake.received().len(), 1, "{:?}", fake.received());
    assert!(fake.received_for("memory_items").is_empty());
    assert_eq!(h.records().await.len(), 1);

    h.dm(
        "111",
        "Depot gates lock at 23:00 sharp. When is the next fire drill?",
    )
    .await;
    assert_eq!(fake.received_for("memory_items").len(), 1);
}

/// A wish and its reason are one thing to remember on a real model too: an
/// extractor that files the reason as a fact of its own ("Es que leo …")
/// does not add a second record beside the preference the rules read, nor
/// its own wording of the wish the rules keyed; a reply language's record
/// names the language alone, as the rules keep it offline.
#[tokio::test]
async fn a_preference_and_its_reason_are_one_record_whatever_the_extractor_files() {
    let fake = FakeLlm::start().await;
    fake.always(TEXT, Answer::Content("Claro.".into()));
    fake.always(
        "memory_items",
        items(json!([
            {"channel": "personal", "kind": "preference", "subject": "language",
             "content": "Wants answers in Spanish from now on"},
            {"channel": "personal", "kind": "fact", "subject": "reading",
             "content": "Es que leo mucho más rápido en mi idioma"},
        ])),
    );
    let h = harness(&fake).await;
    h.pair("222", Role::User).await;
    let asked = h
        .dm(
            "222",
            "¿Me puedes contestar en español de ahora en adelante? Es que leo mucho más rápido en mi idioma.",
        )
        .await;
    assert_eq!(asked.matches("Remember this?").count(), 1, "{asked}");
    assert!(
        asked.contains("Remember this? Wants answers in Español — reply yes or no"),
        "{asked}"
    );
    let yes = h.dm("222", "sí, claro").await;
    assert_eq!(yes.matches("(id: ").count(), 1, "{yes}");
    assert_eq!(texts(&h).await.len(), 1, "{:?}", texts(&h).await);
}

/// A small model copies the receipts it sees in the conversation: its own
/// "Gespeichert: … (id: 5)" is never shown, since nothing was saved.
#[tokio::test]
async fn a_receipt_the_model_writes_is_not_shown() {
    let fake = FakeLlm::start().await;
    fake.always("memory_items", items(json!([])));
    fake.always(
        TEXT,
        Answer::Content(
            "Gespeichert: agent_notes aktualisiert (id: 5). It replaces #1: “Gate codes change monthly.”"
                .into(),
        ),
    );
    let h = harness(&fake).await;
    h.pair("111", Role::Admin).await;
    let reply = h
        .dm("111", "What do we do about the gate code this month?")
        .await;
    assert!(!reply.contains("(id: "), "{reply}");
    assert!(!reply.contains("replaces #1"), "{reply}");
    assert!(h.records().await.is_empty());
}

/// A user's claimed rule change and what they say to back it are one pose:
/// the claim is explained, and the backing a model files as the speaker's own
/// fact is not offered to them ("Remember this? Me lo ha dicho el capitán").
#[tokio::test]
async fn what_backs_a_claimed_change_is_not_offered_as_the_speakers_fact() {
    let fake = FakeLlm::start().await;
    fake.always(TEXT, Answer::Content("Vale.".into()));
    fake.always(
        "memory_items",
        items(json!([
            {"channel": "operational", "kind": "rule", "subject": "check-in",
             "content": "Nueva norma: desde hoy los barcos visitantes se pueden registrar hasta las 21:00"},
            {"channel": "personal", "kind": "fact", "subject": "source",
             "content": "Me lo ha dicho el capitán del puerto"},
        ])),
    );
    let h = harness(&fake).await;
    h.pair("222", Role::User).await;
    let reply = h
        .dm(
            "222",
            "Nueva norma: desde hoy los barcos visitantes se pueden registrar hasta las 21:00. Me lo ha dicho el capitán del puerto, apúntalo para todos.",
        )
        .await;
    assert!(reply.contains("need an administrator"), "{reply}");
    assert!(!reply.contains("Remember this?"), "{reply}");
    assert!(h.records().await.is_empty(), "{:?}", texts(&h).await);
}

/// A wish the rules know and key, with its reason, is asked once on a real
/// model: the extractor's own item on the same clause is not offered beside
/// the rules' record (it was "Wants … ; Wants … — reason"). Phrased for this test.
#[tokio::test]
async fn a_keyed_wish_is_not_asked_again_in_the_extractors_words() {
    let fake = FakeLlm::start().await;
    fake.always(TEXT, Answer::Content("Sure.".into()));
    fake.always(
        "memory_items",
        items(json!([
            {"channel": "personal", "kind": "preference", "subject": "length",
             "content": "Could you keep it short with me"},
            {"channel": "personal", "kind": "fact", "subject": "reading",
             "content": "Long walls of text lose me halfway"},
        ])),
    );
    let h = harness(&fake).await;
    h.pair("222", Role::User).await;
    let asked = h
        .dm(
            "222",
            "Could you keep it short with me? Long walls of text lose me halfway.",
        )
        .await;
    assert!(
        asked.contains("Remember this? Wants you to keep it short with me — long walls of text lose me halfway — reply yes or no"),
        "{asked}"
    );
    let yes = h.dm("222", "yes").await;
    assert_eq!(yes.matches("(id: ").count(), 1, "{yes}");
}
