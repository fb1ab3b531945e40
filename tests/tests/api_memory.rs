//! The REST API v1 (`steward::api`) in-process with `oneshot`, on both
//! databases: memory — one person's records against another's, admins
//! listing, showing and forgetting with a reason, undoing revisions and runs,
//! review, org policy, archives and the audit log.

use axum::http::StatusCode;
use memory::write::RawWrites;
use memory::{Scope, Status};
use serde_json::json;
use steward::config::Config;
use steward_tests::api::{api_on, ids, is_iso};
use steward_tests::{both_dbs, record};

// ------------------------------------------------------------ one's own memory

#[tokio::test]
async fn a_user_key_never_reaches_another_persons_record() {
    for (name, db) in both_dbs().await {
        let a = api_on(db, Config::default()).await;
        let bobs = a
            .record(
                Scope::Personal,
                Some("discord:222"),
                "milk",
                "Bob takes oat milk",
            )
            .await;
        let bobs_person = a
            .record(
                Scope::Person,
                Some("discord:222"),
                "city",
                "Bob lives in Porto",
            )
            .await;
        let carols = a
            .record(
                Scope::Personal,
                Some("discord:333"),
                "milk",
                "Carol takes soy milk",
            )
            .await;
        let notes = a
            .record(
                Scope::AgentNotes,
                None,
                "wiki",
                "The milk wiki is at wiki.example.com",
            )
            .await;
        // List: only one's own.
        let (s, page) = a.get("/api/v1/me/memory", &a.bob).await;
        assert_eq!(s, StatusCode::OK, "{name}: {page}");
        assert_eq!(ids(&page), vec![bobs_person, bobs], "{name}");
        assert!(is_iso(&page["items"][0]["said_at"]), "{name}: {page}");
        let (_, page) = a.get("/api/v1/me/memory?scope=personal", &a.carol).await;
        assert_eq!(ids(&page), vec![carols], "{name}");
        let (s, _) = a.get("/api/v1/me/memory?scope=agent_notes", &a.carol).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{name}");
        // Show: one's own; anyone else's as if it did not exist, whatever the id.
        let (s, r) = a.get(&format!("/api/v1/me/memory/{bobs}"), &a.bob).await;
        assert_eq!(
            (s, r["content"].as_str()),
            (StatusCode::OK, Some("Bob takes oat milk")),
            "{name}"
        );
        let most = notes + 5;
        for id in 1..=most {
            let (s, r) = a.get(&format!("/api/v1/me/memory/{id}"), &a.carol).await;
            if id == carols {
                assert_eq!(s, StatusCode::OK, "{name}");
                continue;
            }
            assert_eq!(s, StatusCode::NOT_FOUND, "{name}: carol shown #{id}: {r}");
            assert_eq!(r["error"], format!("you have no record {id}"), "{name}");
        }
        // Search: what a turn of hers may read, never Bob's.
        let (s, found) = a.get("/api/v1/me/search?q=milk", &a.carol).await;
        assert_eq!(s, StatusCode::OK, "{name}: {found}");
        let contents: Vec<&str> = found["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["record"]["content"].as_str().unwrap())
            .collect();
        assert!(
            contents.contains(&"Carol takes soy milk"),
            "{name}: {contents:?}"
        );
        assert!(
            contents.contains(&"The milk wiki is at wiki.example.com"),
            "{name}: {contents:?}"
        );
        assert!(
            !contents.iter().any(|c| c.contains("Bob")),
            "{name}: {contents:?}"
        );
        assert!(
            found["items"][0]["score"].as_f64().is_some(),
            "{name}: {found}"
        );
        // An admin's search reads notes and policy, and one person's own
        // records only when asked `as` them (audited); Carol's key may not.
        let contents = |found: &serde_json::Value| -> Vec<String> {
            found["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f["record"]["content"].as_str().unwrap().to_string())
                .collect()
        };
        let (s, plain) = a.get("/api/v1/memory/search?q=milk", &a.admin).await;
        assert_eq!(s, StatusCode::OK, "{name}: {plain}");
        assert_eq!(
            contents(&plain),
            vec!["The milk wiki is at wiki.example.com"],
            "{name}"
        );
        let (_, as_bob) = a
            .get(
                "/api/v1/memory/search?q=milk&as=discord:222&reason=support",
                &a.admin,
            )
            .await;
        let bob_sees = contents(&as_bob);
        assert!(
            bob_sees.contains(&"Bob takes oat milk".to_string()),
            "{name}: {bob_sees:?}"
        );
        assert!(
            !bob_sees.iter().any(|c| c.contains("Carol")),
            "{name}: {bob_sees:?}"
        );
        let viewed = a
            .db()
            .audit()
            .about("default", "memory.view", "discord:222")
            .await
            .unwrap();
        assert!(!viewed.is_empty(), "{name}");
        let (s, _) = a
            .get("/api/v1/memory/search?q=milk&as=discord:222", &a.carol)
            .await;
        assert_eq!(s, StatusCode::FORBIDDEN, "{name}");
        let (s, _) = a
            .get(
                "/api/v1/memory/search?q=milk&as=discord:999&reason=support",
                &a.admin,
            )
            .await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{name}");
        // Export: her data only, times ISO-8601, audited.
        let (s, export) = a.get("/api/v1/me/export", &a.carol).await;
        assert_eq!(s, StatusCode::OK, "{name}");
        assert_eq!(export["user"], "discord:333");
        assert!(!export.to_string().contains("Bob"), "{name}: {export}");
        assert!(is_iso(&export["records"][0]["said_at"]), "{name}: {export}");
        let audited = a
            .db()
            .audit()
            .about("default", "memory.export", "discord:333")
            .await
            .unwrap();
        assert_eq!(audited.len(), 1, "{name}");
        // Forget: Bob's records stay whatever Carol guesses.
        for id in 1..=most {
            if id == carols {
                continue;
            }
            let (s, _) = a.delete(&format!("/api/v1/me/memory/{id}"), &a.carol).await;
            assert_eq!(s, StatusCode::NOT_FOUND, "{name}: carol forgot #{id}");
        }
        for id in [bobs, bobs_person, notes] {
            assert_eq!(
                a.db().records().get("default", id).await.unwrap().status,
                Status::Active,
                "{name}"
            );
        }
        // Her own goes, text and all; the second time it is not hers to forget.
        let (s, done) = a
            .delete(&format!("/api/v1/me/memory/{carols}"), &a.carol)
            .await;
        assert_eq!(
            (s, done["forgotten"].as_i64()),
            (StatusCode::OK, Some(carols)),
            "{name}"
        );
        let gone = a.db().records().get("default", carols).await.unwrap();
        assert_eq!(gone.status, Status::Deleted, "{name}");
        assert!(!gone.content.contains("soy"), "{name}");
        let (s, _) = a
            .delete(&format!("/api/v1/me/memory/{carols}"), &a.carol)
            .await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{name}");
    }
}

// ------------------------------------------------------------ memory (admin)

#[tokio::test]
async fn admins_list_show_and_forget_memory_one_person_at_a_time_with_a_reason() {
    for (name, db) in both_dbs().await {
        let a = api_on(db, Config::default()).await;
        let bobs = a
            .record(
                Scope::Personal,
                Some("discord:222"),
                "milk",
                "Bob takes oat milk",
            )
            .await;
        let mut notes = Vec::new();
        for i in 0..5 {
            notes.push(
                a.record(
                    Scope::AgentNotes,
                    None,
                    &format!("host {i}"),
                    &format!("Host {i} is h{i}.example.com"),
                )
                .await,
            );
        }
        let policy = a
            .record(
                Scope::OrgPolicy,
                None,
                "expenses",
                "Expenses need a receipt",
            )
            .await;
        // Without an owner: agent notes and org policy, newest first, in pages.
        let seen = a.every_page("/api/v1/memory?limit=2").await;
        let mut all: Vec<i64> = notes.iter().copied().chain([policy]).collect();
        all.reverse();
        assert_eq!(
            seen, all,
            "{name}: every record once, newest first, no personal one"
        );
        let (_, page) = a.get("/api/v1/memory?scope=org_policy", &a.admin).await;
        assert_eq!(ids(&page), vec![policy], "{name}");
        let (_, page) = a.get("/api/v1/memory?q=H3.EXAMPLE", &a.admin).await;
        assert_eq!(ids(&page), vec![notes[3]], "{name}");
        // Personal memory: one person at a time, and the look is audited.
        let (s, e) = a.get("/api/v1/memory?scope=personal", &a.admin).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{name}: {e}");
        let (s, e) = a.get("/api/v1/memory?owner=discord:222", &a.admin).await;
        assert_eq!(
            (s, e["code"].as_str()),
            (StatusCode::BAD_REQUEST, Some("reason_required")),
            "{name}: {e}"
        );
        let (s, page) = a
            .get("/api/v1/memory?owner=discord:222&reason=support", &a.admin)
            .await;
        assert_eq!((s, ids(&page)), (StatusCode::OK, vec![bobs]), "{name}");
        let views = a
            .db()
            .audit()
            .about("default", "memory.view", "discord:222")
            .await
            .unwrap();
        assert_eq!(
            (views.len(), views[0].actor.as_str()),
            (1, "discord:111"),
            "{name}"
        );
        let (s, r) = a
            .get(&format!("/api/v1/memory/{bobs}?reason=support"), &a.admin)
            .await;
        assert_eq!(
            (s, r["owner"].as_str()),
            (StatusCode::OK, Some("discord:222")),
            "{name}"
        );
        assert!(is_iso(&r["recorded_at"]), "{name}: {r}");
        let views = a
            .db()
            .audit()
            .about("default", "memory.view", "discord:222")
            .await
            .unwrap();
        assert_eq!(
            views.len(),
            2,
            "{name}: opening a personal record is audited"
        );
        // Bad input.
        for bad in [
            "limit=0",
            "limit=201",
            "cursor=abc",
            "status=sleeping",
            "colour=red",
        ] {
            let (s, e) = a.get(&format!("/api/v1/memory?{bad}"), &a.admin).await;
            assert_eq!(s, StatusCode::BAD_REQUEST, "{name}: {bad}: {e}");
            assert!(e["error"].is_string(), "{name}: {e}");
        }
        let (s, _) = a.get("/api/v1/memory/not-a-number", &a.admin).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{name}");
        let (s, _) = a.get("/api/v1/memory/999999", &a.admin).await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{name}");
        // Forget: deleted with its text; again is a conflict.
        let (s, done) = a
            .delete(&format!("/api/v1/memory/{}", notes[0]), &a.admin)
            .await;
        assert_eq!(
            (s, done["forgotten"].as_i64()),
            (StatusCode::OK, Some(notes[0])),
            "{name}"
        );
        let gone = a.db().records().get("default", notes[0]).await.unwrap();
        assert!(
            gone.status == Status::Deleted && !gone.content.contains("h0"),
            "{name}"
        );
        let (s, _) = a
            .delete(&format!("/api/v1/memory/{}", notes[0]), &a.admin)
            .await;
        assert_eq!(s, StatusCode::CONFLICT, "{name}");
        let (s, _) = a.delete("/api/v1/memory/999999", &a.admin).await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{name}");
        // No admin export of one person: a person exports their own.
        let (s, _) = a.get("/api/v1/users/discord:222/export", &a.admin).await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{name}");
    }
}

// ------------------------------------------------------------ revisions, review, policy, archives, audit

#[tokio::test]
async fn admins_undo_revisions_and_runs() {
    for (name, db) in both_dbs().await {
        let a = api_on(db, Config::default()).await;
        let old = a
            .record(
                Scope::AgentNotes,
                None,
                "daily report",
                "The daily report uses example_orders",
            )
            .await;
        let new = a
            .record(
                Scope::AgentNotes,
                None,
                "daily report",
                "The daily report uses example_archive",
            )
            .await;
        // A second pair, and the list in pages of one: newest first, each once.
        a.record(
            Scope::AgentNotes,
            None,
            "weekly report",
            "The weekly report uses w1",
        )
        .await;
        a.record(
            Scope::AgentNotes,
            None,
            "weekly report",
            "The weekly report uses w2",
        )
        .await;
        let mut stored: Vec<i64> = a
            .db()
            .records()
            .revisions("default")
            .await
            .unwrap()
            .iter()
            .map(|r| r.id)
            .collect();
        stored.reverse();
        assert_eq!(
            a.every_page("/api/v1/revisions?limit=1").await,
            stored,
            "{name}"
        );
        let (s, page) = a.get("/api/v1/revisions?cursor=", &a.admin).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{name}: {page}");
        let (s, page) = a
            .get(&format!("/api/v1/revisions?cursor={}", stored[0]), &a.admin)
            .await;
        assert_eq!(
            (s, ids(&page)),
            (StatusCode::OK, stored[1..].to_vec()),
            "{name}"
        );
        let (s, page) = a.get("/api/v1/revisions", &a.admin).await;
        assert_eq!(s, StatusCode::OK, "{name}: {page}");
        let rev = &page["items"][1];
        assert_eq!(
            (rev["retired_id"].as_i64(), rev["replacing_id"].as_i64()),
            (Some(old), Some(new)),
            "{name}"
        );
        assert!(
            is_iso(&rev["created_at"]) && rev["undone_at"].is_null(),
            "{name}: {rev}"
        );
        let id = rev["id"].as_i64().unwrap();
        let run = rev["run_id"].as_str().unwrap().to_string();
        let (s, done) = a
            .post(&format!("/api/v1/revisions/{id}/undo"), &a.admin, json!({}))
            .await;
        assert_eq!(s, StatusCode::OK, "{name}: {done}");
        assert_eq!(
            (
                done["undone"].as_bool(),
                done["restored"]["id"].as_i64(),
                done["rival"].as_i64()
            ),
            (Some(true), Some(old), Some(new)),
            "{name}: {done}"
        );
        assert_eq!(
            a.db().records().get("default", old).await.unwrap().status,
            Status::Active,
            "{name}"
        );
        let (_, again) = a
            .post(&format!("/api/v1/revisions/{id}/undo"), &a.admin, json!({}))
            .await;
        assert_eq!(again["undone"], false, "{name}");
        let (s, _) = a
            .post("/api/v1/revisions/999999/undo", &a.admin, json!({}))
            .await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{name}");
        let (s, r) = a
            .post(&format!("/api/v1/runs/{run}/undo"), &a.admin, json!({}))
            .await;
        // Both pairs were made in run `test`: the one not undone yet is undone now.
        assert_eq!(
            (s, r["undone"].clone()),
            (StatusCode::OK, json!([stored[0]])),
            "{name}: {r}"
        );
        let (s, _) = a
            .post("/api/v1/runs/no-such-run/undo", &a.admin, json!({}))
            .await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{name}");
        let (_, page) = a.get("/api/v1/revisions", &a.admin).await;
        assert!(is_iso(&page["items"][1]["undone_at"]), "{name}: {page}");
    }
}

#[tokio::test]
async fn admins_review_quarantined_records() {
    for (name, db) in both_dbs().await {
        let a = api_on(db, Config::default()).await;
        let at = a.h.tick().timestamp_millis();
        let quarantined = |subject: &str, content: &str| {
            let mut r = record("default", Scope::AgentNotes, None, subject, content, at);
            r.status = Status::Unverified;
            r
        };
        let vpn = a
            .db()
            .records()
            .insert_record(&quarantined("vpn", "The VPN host is vpn2"))
            .await
            .unwrap();
        let wiki = a
            .db()
            .records()
            .insert_record(&quarantined("wiki", "The wiki is at wiki2"))
            .await
            .unwrap();
        let (s, page) = a.get("/api/v1/review", &a.admin).await;
        assert_eq!(
            (s, ids(&page)),
            (StatusCode::OK, vec![wiki, vpn]),
            "{name}: {page}"
        );
        let (s, r) = a
            .post(
                &format!("/api/v1/review/{vpn}/confirm"),
                &a.admin,
                json!({}),
            )
            .await;
        assert_eq!(s, StatusCode::OK, "{name}: {r}");
        assert!(
            r["message"].as_str().unwrap().contains("confirmed"),
            "{name}: {r}"
        );
        assert_eq!(
            a.db().records().get("default", vpn).await.unwrap().status,
            Status::Active,
            "{name}"
        );
        let (s, _) = a
            .post(
                &format!("/api/v1/review/{wiki}/reject"),
                &a.admin,
                json!({}),
            )
            .await;
        assert_eq!(s, StatusCode::OK, "{name}");
        assert_eq!(
            a.db().records().get("default", wiki).await.unwrap().status,
            Status::Rejected,
            "{name}"
        );
        let (s, e) = a
            .post(
                &format!("/api/v1/review/{wiki}/confirm"),
                &a.admin,
                json!({}),
            )
            .await;
        assert_eq!(s, StatusCode::CONFLICT, "{name}: {e}");
        let (s, _) = a
            .post("/api/v1/review/999999/reject", &a.admin, json!({}))
            .await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{name}");
        let (_, page) = a.get("/api/v1/review", &a.admin).await;
        assert!(ids(&page).is_empty(), "{name}");
        let audited = a
            .db()
            .audit()
            .about("default", "review.confirm", &format!("record:{vpn}"))
            .await
            .unwrap();
        assert_eq!(audited[0].actor, "discord:111", "{name}");
    }
}

#[tokio::test]
async fn admins_add_list_and_retire_org_policy() {
    for (name, db) in both_dbs().await {
        let a = api_on(db, Config::default()).await;
        let (s, added) = a
            .post(
                "/api/v1/policy",
                &a.admin,
                json!({"text": "Expenses over 100 EUR need a receipt"}),
            )
            .await;
        assert_eq!(s, StatusCode::CREATED, "{name}: {added}");
        let id = added["id"].as_i64().unwrap();
        let (s, page) = a.get("/api/v1/policy", &a.admin).await;
        assert_eq!((s, ids(&page)), (StatusCode::OK, vec![id]), "{name}");
        assert_eq!(page["items"][0]["scope"], "org_policy", "{name}");
        // Anyone's turn reads it.
        let (_, found) = a.get("/api/v1/me/search?q=receipt", &a.bob).await;
        assert_eq!(
            found["items"][0]["record"]["id"].as_i64(),
            Some(id),
            "{name}: {found}"
        );
        let (s, _) = a
            .post("/api/v1/policy", &a.admin, json!({"text": " "}))
            .await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{name}");
        let long = "word ".repeat(200);
        let (s, e) = a
            .post("/api/v1/policy", &a.admin, json!({"text": long}))
            .await;
        assert_eq!(
            s,
            StatusCode::BAD_REQUEST,
            "{name}: over the record cap: {e}"
        );
        let note = a
            .record(
                Scope::AgentNotes,
                None,
                "wiki",
                "The wiki is at wiki.example.com",
            )
            .await;
        let (s, _) = a.delete(&format!("/api/v1/policy/{note}"), &a.admin).await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{name}: not policy");
        let (s, r) = a.delete(&format!("/api/v1/policy/{id}"), &a.admin).await;
        assert_eq!(
            (s, r["retired"].as_i64()),
            (StatusCode::OK, Some(id)),
            "{name}"
        );
        let (_, page) = a.get("/api/v1/policy", &a.admin).await;
        assert!(ids(&page).is_empty(), "{name}");
        let (s, _) = a.delete(&format!("/api/v1/policy/{id}"), &a.admin).await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{name}: already retired");
    }
}

#[tokio::test]
async fn admins_list_show_and_relearn_archives() {
    for (name, db) in both_dbs().await {
        let a = api_on(db, Config::default()).await;
        let mut m = a.h.inbound(
            Some("111"),
            "g1",
            adapters::ConversationKind::Group,
            "From now on the wiki is at wiki.example.com",
        );
        m.mentioned = false;
        a.h.send(m).await;
        a.h.services
            .lifecycle()
            .trim_now("default", "default", "g1", a.h.now_ms())
            .await
            .unwrap();
        let (s, page) = a.get("/api/v1/archives?conversation=g1", &a.admin).await;
        assert_eq!(s, StatusCode::OK, "{name}: {page}");
        let archive = &page["items"][0];
        assert!(
            archive["markdown"].is_null() && is_iso(&archive["started_at"]),
            "{name}: {archive}"
        );
        let id = archive["id"].as_i64().unwrap();
        let (s, shown) = a.get(&format!("/api/v1/archives/{id}"), &a.admin).await;
        assert_eq!(s, StatusCode::OK, "{name}");
        assert!(
            shown["markdown"]
                .as_str()
                .unwrap()
                .contains("wiki.example.com"),
            "{name}: {shown}"
        );
        let (s, _) = a.get("/api/v1/archives/999999", &a.admin).await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{name}");
        let (s, r) = a
            .post(
                &format!("/api/v1/archives/{id}/relearn"),
                &a.admin,
                json!({}),
            )
            .await;
        assert_eq!(s, StatusCode::OK, "{name}: {r}");
        assert_eq!(
            r["active"].as_array().map(Vec::len),
            Some(1),
            "{name}: a trusted archive is learned: {r}"
        );
        let (s, _) = a
            .post("/api/v1/archives/999999/relearn", &a.admin, json!({}))
            .await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{name}");
        let (_, none) = a.get("/api/v1/archives?conversation=g2", &a.admin).await;
        assert!(ids(&none).is_empty(), "{name}");
    }
}

#[tokio::test]
async fn admins_page_through_the_audit_log() {
    for (name, db) in both_dbs().await {
        let a = api_on(db, Config::default()).await;
        for i in 0..5 {
            a.db()
                .audit()
                .append(
                    "default",
                    "test",
                    "test.action",
                    &format!("t{i}"),
                    &memory::admin_text::AdminText::empty(),
                    1000 + i,
                )
                .await
                .unwrap();
        }
        let seen = a.every_page("/api/v1/audit?limit=3").await;
        let (_, page) = a.get("/api/v1/audit", &a.admin).await;
        assert!(
            page["items"]
                .as_array()
                .unwrap()
                .iter()
                .all(|e| is_iso(&e["at"])),
            "{name}: {page}"
        );
        let all: Vec<i64> = a
            .db()
            .audit()
            .log("default", 1000)
            .await
            .unwrap()
            .iter()
            .map(|e| e.id)
            .collect();
        assert_eq!(seen, all, "{name}: every entry once, newest first");
        assert!(all.len() >= 8, "{name}: pairing and keys were audited too");
    }
}
