//! Issue 46 on phrasings the rules first missed, over the wire: a name
//! with a title, leave asked to change every reply, a reply language asked
//! for good in the yes/no table's other languages, a romanised yes, a model
//! that promises to carry on, and a question that shares only "go" with a
//! routing note or one word with it. Every phrasing here was written for these tests, none
//! taken from an evaluation transcript.

use memory::{Role, Status};
use steward_tests::fake_llm::{small_model_extraction, Answer, FakeLlm, TEXT};
use steward_tests::{both_dbs, Harness};

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
