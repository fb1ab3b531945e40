//! The dashboard's chat in-process (`oneshot`): the built-in admin's turns
//! through the real turn loop, yes and no buttons, resubmitted forms, and
//! messages delivered to the dashboard.

use memory::{Role, Status};
use steward::channels::{self, ConversationRef, Delivered, DeliveryError};
use steward_tests::dashboard::signed_in;
use steward_tests::dashboard::{self, field_value};

// ---------------------------------------------------------------- chat

#[tokio::test]
async fn chat_runs_through_the_turn_loop_as_the_built_in_admin() {
    let (h, mut c, csrf) = signed_in().await;
    let db = h.db();
    let page = c
        .post_and_follow(
            "/dashboard/chat",
            &[
                ("csrf", &csrf),
                ("text", "@notes: The daily report uses example_orders"),
            ],
        )
        .await;
    assert!(
        page.body.contains("Written: agent_notes updated"),
        "{}",
        page.body
    );
    let history = db
        .conversations()
        .history("default", "default", "dashboard:admin")
        .await
        .unwrap();
    assert_eq!(history[0].sender.as_deref(), Some("admin"));
    assert_eq!(history[0].sender_role.as_deref(), Some("admin"));
    assert_eq!(history[0].channel, "dashboard");
    assert_eq!(history[0].conversation_kind, "direct");
    let admin = h
        .services
        .pairing()
        .resolve("default", "admin")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(admin.role, Role::Admin);

    // An implicit operational statement asks "Remember this?" with Yes/No buttons.
    let page = c
        .post_and_follow(
            "/dashboard/chat",
            &[
                ("csrf", &csrf),
                ("text", "From now on the daily report uses example_archive"),
            ],
        )
        .await;
    assert!(page.body.contains("id=\"proposal\""), "{}", page.body);
    let batch = field_value(&page.body, "batch").expect("a Yes/No form");
    let pending = h.records_containing("example_archive").await;
    assert_eq!(pending[0].status, Status::Pending);
    assert_eq!(pending[0].batch.map(|b| b.to_string()), Some(batch.clone()));
    let page = c
        .post_and_follow(
            "/dashboard/chat/answer",
            &[("csrf", &csrf), ("batch", &batch), ("answer", "yes")],
        )
        .await;
    assert!(
        !page.body.contains("id=\"proposal\""),
        "the question is answered"
    );
    assert_eq!(
        h.records_containing("example_archive").await[0].status,
        Status::Active
    );
    assert_eq!(
        h.records_containing("example_orders").await[0].status,
        Status::Superseded
    );
    let answer = db
        .conversations()
        .history("default", "default", "dashboard:admin")
        .await
        .unwrap();
    assert!(answer
        .iter()
        .any(|m| m.text == "yes" && m.sender.as_deref() == Some("admin")));
}

#[tokio::test]
async fn no_discards_the_proposal() {
    let (h, mut c, csrf) = signed_in().await;
    let page = c
        .post_and_follow(
            "/dashboard/chat",
            &[
                ("csrf", &csrf),
                ("text", "From now on the weekly report uses example_weekly"),
            ],
        )
        .await;
    let batch = field_value(&page.body, "batch").expect("a Yes/No form");
    let page = c
        .post_and_follow(
            "/dashboard/chat/answer",
            &[("csrf", &csrf), ("batch", &batch), ("answer", "no")],
        )
        .await;
    assert!(page.body.contains("I won"), "{}", page.body);
    assert_eq!(
        h.records_containing("example_weekly").await[0].status,
        Status::Rejected
    );
}

#[tokio::test]
async fn a_resubmitted_chat_form_runs_once() {
    let (h, mut c, csrf) = signed_in().await;
    let page = c.get("/dashboard/chat").await;
    let nonce = field_value(&page.body, "nonce").expect("a nonce");
    for _ in 0..2 {
        c.post_and_follow(
            "/dashboard/chat",
            &[
                ("csrf", &csrf),
                ("nonce", &nonce),
                ("text", "@notes: The VPN host is vpn1"),
            ],
        )
        .await;
    }
    let said = h
        .db()
        .conversations()
        .history("default", "default", "dashboard:admin")
        .await
        .unwrap()
        .iter()
        .filter(|m| m.author == "person")
        .count();
    assert_eq!(said, 1);
    assert_eq!(h.records_containing("vpn1").await.len(), 1);
}

#[tokio::test]
async fn the_admins_yes_button_cannot_answer_someone_elses_question() {
    let (h, mut c, csrf) = signed_in().await;
    h.pair("222", Role::User).await;
    let replies = h
        .turns
        .handle(&dashboard::dm_now("222", "I prefer short answers"))
        .await
        .unwrap();
    let batch = replies[0].proposal.expect("a question for 222").to_string();
    let page = c
        .post_and_follow(
            "/dashboard/chat/answer",
            &[("csrf", &csrf), ("batch", &batch), ("answer", "yes")],
        )
        .await;
    assert!(page.body.contains("was not asked to you"), "{}", page.body);
    assert_eq!(
        h.records_containing("short answers").await[0].status,
        Status::Pending
    );
}

/// A message delivered to the dashboard's chat (an automated run's) is the
/// agent's line of `dashboard:admin`, shown on the chat page.
#[tokio::test]
async fn a_delivered_message_shows_in_the_dashboard_chat() {
    let (h, mut c, _) = signed_in().await;
    let to = |conversation: &str| ConversationRef {
        org: "default".into(),
        agent: "default".into(),
        conversation: conversation.into(),
    };
    let delivered = channels::deliver(
        &h.services,
        "dashboard",
        &to(steward::dashboard::CHAT_CONVERSATION),
        "The nightly import finished.",
    )
    .await
    .expect("delivered");
    assert!(
        matches!(delivered, Delivered::Stored { .. }),
        "{delivered:?}"
    );
    let page = c.get("/dashboard/chat").await.body;
    assert!(page.contains("The nightly import finished."), "{page}");
    let e = channels::deliver(&h.services, "dashboard", &to("dashboard:someone"), "hi")
        .await
        .expect_err("only the admin's chat");
    assert!(matches!(e, DeliveryError::NoRoute { .. }), "{e}");
    // The API cannot push to a client: a clear refusal, nothing stored.
    let e = channels::deliver(&h.services, "api", &to("api:discord:222"), "hi")
        .await
        .expect_err("unsupported");
    assert!(
        matches!(e, DeliveryError::Unsupported { channel: "api", .. }),
        "{e}"
    );
}
