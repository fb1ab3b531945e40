//! A person's record that conflicts with one they keep is asked with both
//! values and three answers — yes replaces it, "both" keeps both, no keeps
//! what they have (docs/memory.md, "Contradictions are asked") — in chat,
//! over the API and on the dashboard, on both databases. Whatever asked it
//! kept (an explicit "remember that", a yes), nothing of theirs is replaced
//! unasked; the judge proposes, and only a yes retires what it named.

use memory::{Role, Status};
use serde_json::{json, Value};
use steward::http::{app, AppState};
use steward_tests::dashboard::{self, Client};
use steward_tests::fake_llm::{Answer, FakeLlm};
use steward_tests::{both_dbs, Harness};

/// The record a receipt names ("… (id: 7)").
fn receipt_id(reply: &str) -> i64 {
    reply
        .split("(id: ")
        .nth(1)
        .and_then(|r| r.split(')').next())
        .and_then(|id| id.parse().ok())
        .unwrap_or_else(|| panic!("no receipt in {reply}"))
}

async fn status(h: &Harness, id: i64) -> Status {
    h.db()
        .records()
        .get(&h.org, id)
        .await
        .expect("record")
        .status
}

#[tokio::test]
async fn a_conflicting_value_is_asked_and_yes_both_and_no_each_do_what_they_say() {
    for (name, db) in both_dbs().await {
        let h = Harness::on(db, steward::Config::default());
        h.pair("222", Role::User).await;
        h.dm("222", "Call me Bo").await;
        let bo = receipt_id(&h.dm("222", "yes").await);

        let asked = h.dm("222", "Call me Robert").await;
        assert_eq!(
            asked,
            format!("Remember this? Wants to be called Robert (it conflicts with #{bo}: “Wants to be called Bo”: yes replaces it, both keeps both, no keeps only what you have) — reply yes or no"),
            "{name}"
        );
        let both = h.dm("222", "both").await;
        let robert = receipt_id(&both);
        assert!(
            both.ends_with(&format!("Kept beside #{bo}.")),
            "{name}: {both}"
        );
        assert_eq!(status(&h, bo).await, Status::Active, "{name}");
        assert_eq!(status(&h, robert).await, Status::Active, "{name}");

        // No keeps only what they have.
        let asked = h.dm("222", "Call me Rob").await;
        assert!(
            asked.contains(&format!("#{bo}")) && asked.contains(&format!("#{robert}")),
            "{name}: {asked}"
        );
        assert_eq!(
            h.dm("222", "no").await,
            "Okay, I won't remember that.",
            "{name}"
        );
        assert_eq!(status(&h, bo).await, Status::Active, "{name}");
        assert_eq!(status(&h, robert).await, Status::Active, "{name}");

        // Yes replaces both (in the person's language: "ja").
        h.dm("222", "Call me Bobby").await;
        let yes = h.dm("222", "ja").await;
        assert!(
            yes.contains(&format!("#{bo}")) && yes.contains(&format!("#{robert}")),
            "{name}: {yes}"
        );
        assert_eq!(status(&h, bo).await, Status::Superseded, "{name}");
        assert_eq!(status(&h, robert).await, Status::Superseded, "{name}");
        assert_eq!(status(&h, receipt_id(&yes)).await, Status::Active, "{name}");
    }
}

#[tokio::test]
async fn an_explicit_write_that_conflicts_is_paused_and_asked() {
    for (name, db) in both_dbs().await {
        let h = Harness::on(db, steward::Config::default());
        h.pair("222", Role::User).await;
        let kept = h.dm("222", "remember that my name is Ana").await;
        let ana = receipt_id(&kept);
        let paused = h.dm("222", "remember that my name is Anna").await;
        assert!(
            paused.starts_with("Remember this? Their name is Anna (it conflicts with #")
                && paused.contains("“Their name is Ana”"),
            "{name}: {paused}"
        );
        // Nothing replaced until the person answers.
        assert_eq!(status(&h, ana).await, Status::Active, "{name}");
        let yes = h.dm("222", "yes").await;
        assert_eq!(status(&h, ana).await, Status::Superseded, "{name}: {yes}");
    }
}

/// The judge (over the fake OpenAI server) says "Prefers coffee" replaces
/// "Prefers tea": the person is asked, "both" keeps both, and the judge's
/// verdict alone retires nothing.
#[tokio::test]
async fn the_judge_proposes_and_never_replaces_a_persons_record() {
    for (name, db) in both_dbs().await {
        let fake = FakeLlm::start().await;
        let h = Harness::on(db, fake.config());
        h.pair("222", Role::User).await;
        h.dm("222", "I prefer tea").await;
        let tea = receipt_id(&h.dm("222", "yes").await);
        fake.always(
            "belief_revision",
            Answer::Json(json!({"retire": [{"id": tea, "reason": "coffee instead of tea"}]})),
        );
        // Said outright, it is kept, and the judge replaces nothing.
        h.dm("222", "remember that I like green tea").await;
        assert_eq!(status(&h, tea).await, Status::Active, "{name}");
        // Asked, the judge's candidate is named in the question.
        let asked = h.dm("222", "I prefer coffee").await;
        assert!(
            asked.contains(&format!("it conflicts with #{tea}: “Prefers tea”")),
            "{name}: {asked}"
        );
        let both = h.dm("222", "both").await;
        assert_eq!(status(&h, tea).await, Status::Active, "{name}: {both}");
        assert_eq!(
            status(&h, receipt_id(&both)).await,
            Status::Active,
            "{name}"
        );
        // The person's choice is audited; the revisions hold the veto.
        let audit = h.db().audit().log(&h.org, 50).await.expect("audit");
        assert!(
            audit.iter().any(|e| e.action == "memory.keep_both"),
            "{name}"
        );
    }
}

#[tokio::test]
async fn the_api_and_the_dashboard_ask_the_same_question() {
    for (name, db) in both_dbs().await {
        let h = Harness::on(db, dashboard::config());
        let ana = h.pair("222", Role::User).await;
        let key = h
            .services
            .pairing()
            .create_api_key("default", &ana, &ana, 1)
            .await
            .expect("key")
            .key;
        let api = app(AppState::new(h.services.clone()));
        let say = |text: &str| json!({"conversation": "prefs", "text": text});
        let post = |body: Value| {
            let (api, key) = (api.clone(), key.clone());
            async move {
                steward_tests::call_api(&api, "POST", "/api/v1/messages", &key, Some(body)).await
            }
        };
        let text = |v: &Value| v.to_string();
        post(say("Call me Bo")).await;
        post(say("yes")).await;
        let (_, asked) = post(say("Call me Robert")).await;
        assert!(text(&asked).contains("both keeps both"), "{name}: {asked}");
        let (_, both) = post(say("both")).await;
        assert!(text(&both).contains("Kept beside #"), "{name}: {both}");

        // The dashboard (the built-in admin's own memory) offers "Keep both".
        let mut c = Client::new(h.services.clone());
        c.sign_in(dashboard::TOKEN).await;
        let csrf = c.csrf().await;
        for said in ["Call me Boss", "yes", "Call me Chief"] {
            c.post_and_follow("/dashboard/chat", &[("csrf", &csrf), ("text", said)])
                .await;
        }
        let page = c.get("/dashboard/chat").await;
        assert!(page.body.contains("Keep both"), "{name}: {}", page.body);
        let kept = c
            .post_and_follow("/dashboard/chat", &[("csrf", &csrf), ("text", "both")])
            .await;
        assert!(kept.body.contains("Kept beside #"), "{name}: {}", kept.body);
    }
}

/// A direct message from `discord:<user>` stamped now: the dashboard reads
/// which questions wait by the wall clock.
async fn say(h: &Harness, user: &str, text: &str) -> String {
    steward_tests::join(h.send(dashboard::dm_now(user, text)).await)
}

/// A browser signed in as `user` (a paired stored id) through a one-time
/// sign-in link, as `/web` gives one.
async fn signed_in_as(h: &Harness, user: &str) -> (Client, String) {
    let token = h
        .services
        .pairing()
        .create_sign_in_link(&h.org, user, dashboard::now(), 10 * 60_000)
        .await
        .expect("a sign-in link");
    let mut c = Client::new(h.services.clone());
    let signed = c.post(&format!("/web/sign-in/{token}"), &[]).await;
    assert_eq!(signed.status, 200, "{}", signed.body);
    let me = c.get("/dashboard/me").await;
    let csrf = dashboard::field_value(&me.body, "csrf").expect("csrf");
    (c, csrf)
}

/// The question (batch) the proposal whose text contains `text` was asked in.
async fn question_of(h: &Harness, text: &str) -> String {
    let asked = h.records_containing(text).await;
    let pending = asked
        .iter()
        .find(|r| r.status == Status::Pending)
        .unwrap_or_else(|| panic!("no pending {text} in {asked:?}"));
    pending.batch.expect("a batch").to_string()
}

#[tokio::test]
async fn your_memory_shows_only_your_questions_and_answers_them_as_chat_does() {
    for (name, db) in both_dbs().await {
        let h = Harness::on(db, dashboard::config());
        let ana = h.pair("222", Role::User).await;
        let cy = h.pair("333", Role::User).await;
        say(&h, "222", "Call me Bo").await;
        let bo = receipt_id(&say(&h, "222", "yes").await);
        say(&h, "222", "Call me Robert").await;
        say(&h, "333", "Call me Cy").await;
        let cy_kept = receipt_id(&say(&h, "333", "yes").await);
        say(&h, "333", "Call me Cyrus").await;
        let (robert_q, cyrus_q) = (
            question_of(&h, "Robert").await,
            question_of(&h, "Cyrus").await,
        );

        // Ana sees her question, both texts, three answers; not Cy's.
        let (mut c, csrf) = signed_in_as(&h, &ana).await;
        let page = c.get("/dashboard/me").await.body;
        assert!(page.contains("Questions waiting for you"), "{name}: {page}");
        assert!(
            page.contains(&format!("id=\"question-{robert_q}\"")),
            "{name}"
        );
        assert!(page.contains("Wants to be called Robert"), "{name}");
        assert!(
            page.contains(&format!("#{bo}, said")),
            "{name}: the kept one named"
        );
        for answer in ["Keep the new", "Keep the old", "Keep both"] {
            assert!(page.contains(answer), "{name}: {answer}");
        }
        assert!(!page.contains("Cyrus") && !page.contains(&format!("question-{cyrus_q}")));

        // Cy's question cannot be answered from Ana's session.
        for answer in ["new", "old", "both"] {
            let refused = c
                .post(
                    "/dashboard/me/question",
                    &[("csrf", &csrf), ("batch", &cyrus_q), ("answer", answer)],
                )
                .await;
            assert_eq!(refused.status, 404, "{name}: {}", refused.body);
        }
        let cyrus = h.records_containing("Cyrus").await;
        assert_eq!(cyrus[0].status, Status::Pending, "{name}: untouched");
        assert_eq!(status(&h, cy_kept).await, Status::Active, "{name}");
        // Nor without the session's CSRF token.
        let forged = c
            .post(
                "/dashboard/me/question",
                &[("batch", robert_q.as_str()), ("answer", "new")],
            )
            .await;
        assert_eq!(forged.status, 403, "{name}");

        // "Keep both": both texts kept, the question gone, the choice audited.
        let kept = c
            .post_and_follow(
                "/dashboard/me/question",
                &[("csrf", &csrf), ("batch", &robert_q), ("answer", "both")],
            )
            .await
            .body;
        assert!(
            kept.contains(&format!("Kept beside #{bo}.")),
            "{name}: {kept}"
        );
        assert!(!kept.contains(&format!("question-{robert_q}")), "{name}");
        assert!(!kept.contains("Questions waiting for you"), "{name}");
        let mine = kept
            .split("What steward keeps about you")
            .nth(1)
            .expect("records");
        assert!(
            mine.contains("Wants to be called Robert") && mine.contains("Wants to be called Bo"),
            "{name}: {mine}"
        );
        let audit = h.db().audit().log(&h.org, 50).await.expect("audit");
        assert!(
            audit
                .iter()
                .any(|e| e.action == "memory.conflict_answer" && e.actor == ana),
            "{name}: {audit:?}"
        );
        assert!(
            audit
                .iter()
                .any(|e| e.action == "memory.keep_both" && e.actor == ana),
            "{name}"
        );
        // Answered: it cannot be answered again.
        let again = c
            .post(
                "/dashboard/me/question",
                &[("csrf", &csrf), ("batch", &robert_q), ("answer", "new")],
            )
            .await;
        assert_eq!(again.status, 404, "{name}");

        // "Keep the new": the new text replaces both.
        say(&h, "222", "Call me Rob").await;
        let rob_q = question_of(&h, "Rob").await;
        let page = c
            .post_and_follow(
                "/dashboard/me/question",
                &[("csrf", &csrf), ("batch", &rob_q), ("answer", "new")],
            )
            .await
            .body;
        let mine = page
            .split("What steward keeps about you")
            .nth(1)
            .expect("records");
        assert!(mine.contains("Wants to be called Rob<"), "{name}: {mine}");
        assert!(
            !mine.contains("Wants to be called Bo<") && !mine.contains("Robert"),
            "{name}: {mine}"
        );
        assert_eq!(status(&h, bo).await, Status::Superseded, "{name}");

        // "Keep the old": nothing new kept.
        say(&h, "222", "Call me Bobby").await;
        let bobby_q = question_of(&h, "Bobby").await;
        let page = c
            .post_and_follow(
                "/dashboard/me/question",
                &[("csrf", &csrf), ("batch", &bobby_q), ("answer", "old")],
            )
            .await
            .body;
        assert!(page.contains("remember that."), "{name}: the answer said");
        let mine = page
            .split("What steward keeps about you")
            .nth(1)
            .expect("records");
        assert!(
            mine.contains("Wants to be called Rob<") && !mine.contains("Bobby"),
            "{name}"
        );
        assert_eq!(
            h.records_containing("Bobby").await[0].status,
            Status::Rejected,
            "{name}"
        );

        // Cy still has his, on his own page, and answers it there.
        let (mut cyc, cy_csrf) = signed_in_as(&h, &cy).await;
        let page = cyc.get("/dashboard/me").await.body;
        assert!(page.contains(&format!("question-{cyrus_q}")), "{name}");
        assert!(
            !page.contains("Robert") && !page.contains("Bobby"),
            "{name}"
        );
        let page = cyc
            .post_and_follow(
                "/dashboard/me/question",
                &[("csrf", &cy_csrf), ("batch", &cyrus_q), ("answer", "new")],
            )
            .await
            .body;
        let mine = page
            .split("What steward keeps about you")
            .nth(1)
            .expect("records");
        assert!(mine.contains("Wants to be called Cyrus"), "{name}: {mine}");
        assert_eq!(status(&h, cy_kept).await, Status::Superseded, "{name}");
    }
}
