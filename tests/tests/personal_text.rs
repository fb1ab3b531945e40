//! A person's words reach an administrator only through a reasoned look the
//! person is shown. The side doors an attacker found — a revision's reason
//! quoting a replaced record, a model's search query in the audit log, a
//! direct conversation's topics or a model's summary of it in the archive
//! list, an undo message naming
//! a record's subject — each carry ids and kinds now. Canary words are said
//! through real turns (a model over the wire, on both databases), then every
//! administrator's read of the API without a reason is searched for them.

use axum::http::StatusCode;
use memory::store::NewArchive;
use memory::Role;
use serde_json::{json, Value};
use steward::http::{app, AppState};
use steward_tests::fake_llm::{Answer, FakeLlm, TEXT};
use steward_tests::{both_dbs, dashboard, Harness};

/// The dashboard's pages an administrator reads without a reason.
const DASHBOARD_PAGES: &[&str] = &[
    "/dashboard/chat",
    "/dashboard/pairing",
    "/dashboard/roles",
    "/dashboard/memory",
    "/dashboard/memory?scope=org_policy",
    "/dashboard/memory?scope=people",
    "/dashboard/review",
    "/dashboard/revisions",
    "/dashboard/skills",
    "/dashboard/runs",
    "/dashboard/audit",
    "/dashboard/settings",
];

/// Words only Ana said, each through another side door.
const CANARIES: [&str; 4] = ["kneecap", "serology", "melancholy", "insomnia"];

async fn call(app: &axum::Router, method: &str, path: &str, key: &str) -> (StatusCode, Value) {
    steward_tests::call_api(app, method, path, key, None).await
}

#[tokio::test]
async fn no_administrators_read_without_a_reason_holds_a_persons_words() {
    for (name, db) in both_dbs().await {
        let fake = FakeLlm::start().await;
        let mut cfg = fake.config();
        cfg.dashboard.admin_token = Some(dashboard::TOKEN.into());
        let h = Harness::on(db, cfg);
        let admin = h.pair("111", Role::Admin).await;
        let ana = h.pair("222", Role::User).await;
        let p = h.services.pairing().clone();
        let admin_key = p
            .create_api_key("default", &admin, &admin, 1)
            .await
            .unwrap()
            .key;
        let bob = h.pair("333", Role::User).await;
        let bob_key = p
            .create_api_key("default", &bob, &bob, 1)
            .await
            .unwrap()
            .key;
        let app = app(AppState::new(h.services.clone()));

        // 1. Ana keeps a fact, then says a newer one on the same topic: the
        // judge names the first (its reason quotes it), she is asked, and
        // her yes retires it.
        let fact = |subject: &str, content: &str| {
            Answer::Json(json!({"items": [{
                "channel": "personal", "kind": "fact",
                "subject": subject, "content": content
            }]}))
        };
        fake.push(
            "memory_items",
            fact("surgery", "My kneecap surgery is on Friday"),
        );
        h.dm("222", "remember that my kneecap surgery is on Friday")
            .await;
        let first = h.records_containing("kneecap").await[0].id;
        fake.push(
            "memory_items",
            fact("operation", "My kneecap operation is on Monday"),
        );
        fake.always(
            "belief_revision",
            Answer::Json(json!({"retire": [{
                "id": first,
                "reason": "replaced: 'my kneecap surgery is on Friday'"
            }]})),
        );
        let asked = h.dm("222", "My kneecap operation is on Monday").await;
        assert!(
            asked.contains(&format!("it conflicts with #{first}")),
            "{name}: {asked}"
        );
        h.dm("222", "yes").await;
        let revisions = h.db().records().revisions(&h.org).await.unwrap();
        assert_eq!(
            fake.received_for("belief_revision").len(),
            1,
            "{name}: the judge was asked"
        );
        assert!(
            revisions.iter().any(|r| r.retired_id == first),
            "{name}: the judge retired the first record: {revisions:?}"
        );

        // 2. A model searches her memory with her words.
        fake.push(
            TEXT,
            Answer::tool("memory_search", json!({"query": "serology result Tuesday"})),
        );
        fake.push(TEXT, Answer::Content("I found nothing.".into()));
        h.dm("222", "what did the serology say?").await;

        // 3. Her direct conversation is archived, its topics her words.
        let lines = h
            .db()
            .conversations()
            .history("default", "default", "dm:222")
            .await
            .unwrap();
        let last_line = lines.last().map_or(0, |m| m.id);
        let archived = h
            .db()
            .conversations()
            .archive_slice(&NewArchive {
                org: "default",
                agent: "default",
                channel: "discord",
                conversation: "dm:222",
                conversation_kind: "direct",
                first_id: 1,
                last_id: last_line,
                started_at: 1,
                ended_at: 2,
                trust: "mixed",
                summary: &steward::lifecycle::summarize(&lines),
                markdown: "# Ana\n\nfeeling melancholy",
                created_at: 3,
                created_by: "operator",
            })
            .await
            .unwrap()
            .expect("archived");
        // 4. Its next slice, summarised by a model in its own words (no
        // "Topics:" to cut at).
        fake.push(TEXT, Answer::Content("You're welcome.".into()));
        h.dm("222", "thanks").await;
        h.db()
            .conversations()
            .archive_slice(&NewArchive {
                org: "default",
                agent: "default",
                channel: "discord",
                conversation: "dm:222",
                conversation_kind: "direct",
                first_id: last_line + 1,
                last_id: i64::MAX,
                started_at: 3,
                ended_at: 4,
                trust: "mixed",
                summary: "Ana said her insomnia is back since the move.",
                markdown: "# Ana\n\ninsomnia again",
                created_at: 3,
                created_by: "operator",
            })
            .await
            .unwrap()
            .expect("archived");

        // Every administrator's read without path parameters, no reason.
        let (s, doc) = call(&app, "GET", "/api/v1/openapi.json", &admin_key).await;
        assert_eq!(s, StatusCode::OK, "{name}");
        let mut read = 0;
        for (path, item) in doc["paths"].as_object().unwrap() {
            if path.contains('{') || path.starts_with("/api/v1/me") || item.get("get").is_none() {
                continue;
            }
            // As the administrator (no reason), and as another person.
            for (who, key) in [("admin", &admin_key), ("bob", &bob_key)] {
                let (_, body) = call(&app, "GET", path, key).await;
                let text = body.to_string();
                for canary in CANARIES {
                    assert!(
                        !text.contains(canary),
                        "{name}: GET {path} as {who} shows Ana's word {canary:?}: {text}"
                    );
                }
            }
            read += 1;
        }
        assert!(read >= 10, "{name}: {read} reads");
        // Bob's own reads (`/api/v1/me…`) hold nothing of Ana's either.
        for path in [
            "/api/v1/me/memory",
            "/api/v1/me/export",
            "/api/v1/me/search?q=kneecap%20serology",
        ] {
            let (_, body) = call(&app, "GET", path, &bob_key).await;
            for canary in CANARIES {
                assert!(
                    !body.to_string().contains(canary),
                    "{name}: GET {path} as bob shows {canary:?}"
                );
            }
        }
        // Every page of the dashboard, signed in as its administrator.
        let mut browser = dashboard::Client::new(h.services.clone());
        browser.sign_in(dashboard::TOKEN).await;
        for page in DASHBOARD_PAGES {
            let shown = browser.get(page).await;
            assert_eq!(shown.status, StatusCode::OK, "{name}: {page}");
            for canary in CANARIES {
                assert!(
                    !shown.body.contains(canary),
                    "{name}: {page} shows Ana's word {canary:?}"
                );
            }
        }
        // The revision is still listed: by ids and kinds.
        let (_, revs) = call(&app, "GET", "/api/v1/revisions", &admin_key).await;
        assert!(
            revs.to_string()
                .contains(&format!("\"retired_id\":{first}")),
            "{name}: {revs}"
        );
        // Undoing it names no subject of hers.
        let revision = revisions.iter().find(|r| r.retired_id == first).unwrap().id;
        let (s, undone) = call(
            &app,
            "POST",
            &format!("/api/v1/revisions/{revision}/undo"),
            &admin_key,
        )
        .await;
        assert_eq!(s, StatusCode::OK, "{name}: {undone}");
        let said = undone.to_string();
        assert!(
            !said.contains("kneecap") && !said.contains("surgery"),
            "{name}: {said}"
        );
        // A reasoned look shows the archive whole, and Ana is told of it.
        let (s, whole) = call(
            &app,
            "GET",
            &format!("/api/v1/archives/{archived}?reason=support%20ticket%2042"),
            &admin_key,
        )
        .await;
        assert_eq!(s, StatusCode::OK, "{name}");
        assert!(whole.to_string().contains("serology"), "{name}: {whole}");
        let shown = h.dm("222", "/memory").await;
        assert!(shown.contains("support ticket 42"), "{name}: {shown}");
        let _ = ana;
    }
}
