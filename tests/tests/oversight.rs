//! Oversight that cannot become surveillance (docs/memory.md, "Oversight and the two
//! promises"): an administrator reads one person's individual records only
//! with a reason, which is audited and shown to the person; the person tier
//! is never shown to anyone but its owner; no admin route or command
//! aggregates one person's memory; steward's two promises appear word for
//! word on every surface; a person promotes their own records and opts in to
//! auto-keep under the operator's ceiling. Over the REST API and chat, on
//! both databases.

use axum::http::StatusCode;
use clap::CommandFactory;
use memory::store::NewArchive;
use memory::write::RawWrites;
use memory::{Db, Role, Scope, ANY_AGENT};
use serde_json::{json, Value};
use steward::config::Config;
use steward::http::{app, AppState};
use steward::oversight::{KEEP_PROMISE, PROMISES, TRAINING_PROMISE};
use steward_tests::{both_dbs, record, Harness};

const ANA: &str = "discord:222";
/// Words only Ana's person tier holds.
const PERSON_TIER: [&str; 2] = ["Lisbon", "mornings"];

/// An admin (`discord:111`) and Ana, each with a key; Ana has an individual
/// record, a person-tier record and a direct conversation's archive.
struct Office {
    h: Harness,
    app: axum::Router,
    admin: String,
    ana: String,
    personal: i64,
    person: i64,
}

impl Office {
    async fn on(db: Db) -> Office {
        Office::with(db, Config::default()).await
    }

    async fn with(db: Db, cfg: Config) -> Office {
        let h = Harness::on(db, cfg);
        h.pair("111", Role::Admin).await;
        h.pair("222", Role::User).await;
        let p = h.services.pairing().clone();
        let admin = p
            .create_api_key("default", "discord:111", "test", 1)
            .await
            .unwrap()
            .key;
        let ana = p
            .create_api_key("default", ANA, "test", 1)
            .await
            .unwrap()
            .key;
        let records = h.db().records();
        let personal = records
            .insert_record(&memory::NewRecord {
                kind: "preference".into(),
                ..record(
                    "default",
                    Scope::Personal,
                    Some(ANA),
                    "reply_language",
                    "Ana prefers answers in Portuguese",
                    1,
                )
            })
            .await
            .unwrap();
        let person = records
            .insert_record(&memory::NewRecord {
                agent: ANY_AGENT.into(),
                ..record(
                    "default",
                    Scope::Person,
                    Some(ANA),
                    "working_hours",
                    "Ana works from Lisbon, mornings only",
                    1,
                )
            })
            .await
            .unwrap();
        let app = app(AppState::new(h.services.clone()));
        Office {
            h,
            app,
            admin,
            ana,
            personal,
            person,
        }
    }

    async fn call(
        &self,
        method: &str,
        path: &str,
        key: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        steward_tests::call_api(&self.app, method, path, key, body).await
    }

    async fn get(&self, path: &str, key: &str) -> (StatusCode, Value) {
        self.call("GET", path, key, None).await
    }

    /// A message with `key`; the joined reply text.
    async fn say(&self, key: &str, text: &str) -> String {
        let (s, body) = self
            .call("POST", "/api/v1/messages", key, Some(json!({"text": text})))
            .await;
        assert_eq!(s, StatusCode::OK, "{text}: {body}");
        body["replies"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["text"].as_str().unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Every `memory.view` and `archive.view` row about Ana.
    async fn looks(&self) -> Vec<memory::AuditEntry> {
        let audit = self.h.db().audit();
        let mut all = audit.about("default", "memory.view", ANA).await.unwrap();
        all.extend(audit.about("default", "archive.view", ANA).await.unwrap());
        all
    }

    /// Ana says something in her direct API conversation, and it is archived.
    async fn archive_anas_conversation(&self) -> i64 {
        self.say(&self.ana, "hello there").await;
        self.h
            .db()
            .conversations()
            .archive_slice(&NewArchive {
                org: "default",
                agent: "default",
                channel: "api",
                conversation: &format!("api:{ANA}"),
                conversation_kind: "direct",
                first_id: 1,
                last_id: i64::MAX,
                started_at: 1,
                ended_at: 2,
                trust: "mixed",
                summary: "a greeting",
                markdown: "# Ana's conversation\n\nhello there",
                created_at: 3,
                created_by: "operator",
            })
            .await
            .unwrap()
            .expect("archived")
    }
}

fn shows_person_tier(v: &Value) -> bool {
    let text = v.to_string();
    PERSON_TIER.iter().any(|w| text.contains(w))
}

#[tokio::test]
async fn oversight_needs_a_reason_and_never_shows_the_person_tier() {
    for (name, db) in both_dbs().await {
        let o = Office::on(db).await;
        // No reason (missing or blank): refused with a code, nothing audited.
        for path in [
            format!("/api/v1/memory?owner={ANA}"),
            format!("/api/v1/memory?owner={ANA}&reason=%20%20"),
            format!("/api/v1/memory/{}", o.personal),
            format!("/api/v1/memory/search?q=Portuguese&as={ANA}"),
        ] {
            let (s, e) = o.get(&path, &o.admin).await;
            assert_eq!(s, StatusCode::BAD_REQUEST, "{name}: {path}: {e}");
            assert_eq!(e["code"], "reason_required", "{name}: {path}: {e}");
        }
        assert!(
            o.looks().await.is_empty(),
            "{name}: a refused read is no look"
        );
        // With a reason: her individual records, never her person tier.
        let (s, page) = o
            .get(
                &format!("/api/v1/memory?owner={ANA}&reason=ticket%207"),
                &o.admin,
            )
            .await;
        assert_eq!(s, StatusCode::OK, "{name}: {page}");
        assert!(page.to_string().contains("Portuguese"), "{name}: {page}");
        assert!(!shows_person_tier(&page), "{name}: {page}");
        let (s, found) = o
            .get(
                &format!("/api/v1/memory/search?q=Lisbon%20mornings%20Portuguese&as={ANA}&reason=ticket%207"),
                &o.admin,
            )
            .await;
        assert_eq!(s, StatusCode::OK, "{name}: {found}");
        assert!(!shows_person_tier(&found), "{name}: {found}");
        // Asking for the person tier by name is refused, reason or not.
        for path in [
            format!("/api/v1/memory?owner={ANA}&scope=person&reason=x"),
            format!("/api/v1/memory/{}?reason=x", o.person),
        ] {
            let (s, e) = o.get(&path, &o.admin).await;
            assert_eq!(s, StatusCode::FORBIDDEN, "{name}: {path}: {e}");
            assert_eq!(e["code"], "person_tier_owner_only", "{name}: {e}");
            assert!(!shows_person_tier(&e), "{name}: {e}");
        }
        // Each reasoned look is audited with its reason.
        let looks = o.looks().await;
        assert_eq!(looks.len(), 2, "{name}: {looks:?}");
        assert!(
            looks
                .iter()
                .all(|e| e.actor == "discord:111" && e.detail.ends_with("reason: ticket 7")),
            "{name}: {looks:?}"
        );
        // The per-person export is gone.
        let (s, _) = o
            .get(&format!("/api/v1/users/{ANA}/export"), &o.admin)
            .await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{name}");
        // Ana is shown who looked and why, in the API and in chat; her own
        // export and her own view still hold both her tiers.
        let (s, mine) = o.get("/api/v1/me/memory", &o.ana).await;
        assert_eq!(s, StatusCode::OK, "{name}: {mine}");
        assert!(
            shows_person_tier(&mine),
            "{name}: her own view shows her person tier"
        );
        let viewed = mine["viewed_by"].as_array().unwrap();
        assert_eq!(viewed.len(), 2, "{name}: {mine}");
        assert_eq!(viewed[0]["who"], "111", "{name}: {mine}");
        assert_eq!(viewed[0]["reason"], "ticket 7", "{name}: {mine}");
        assert!(viewed[0]["at"].is_string(), "{name}: {mine}");
        let chat = o.say(&o.ana, "/memory").await;
        assert!(
            chat.contains("Viewed by 111 on ") && chat.contains("Reason: ticket 7"),
            "{name}: {chat}"
        );
        let (s, export) = o.get("/api/v1/me/export", &o.ana).await;
        assert_eq!(s, StatusCode::OK, "{name}: {export}");
        assert!(shows_person_tier(&export), "{name}: {export}");
    }
}

#[tokio::test]
async fn reading_a_persons_direct_conversation_needs_a_reason_and_is_audited() {
    for (name, db) in both_dbs().await {
        let o = Office::on(db).await;
        let id = o.archive_anas_conversation().await;
        let (s, e) = o.get(&format!("/api/v1/archives/{id}"), &o.admin).await;
        assert_eq!(
            (s, e["code"].as_str()),
            (StatusCode::BAD_REQUEST, Some("reason_required")),
            "{name}: {e}"
        );
        assert!(o.looks().await.is_empty(), "{name}");
        let (s, a) = o
            .get(
                &format!("/api/v1/archives/{id}?reason=complaint%2012"),
                &o.admin,
            )
            .await;
        assert_eq!(s, StatusCode::OK, "{name}: {a}");
        assert!(a["markdown"].as_str().unwrap().contains("hello there"));
        let looks =
            o.h.db()
                .audit()
                .about("default", "archive.view", ANA)
                .await
                .unwrap();
        assert_eq!(looks.len(), 1, "{name}");
        assert!(
            looks[0].detail.ends_with("reason: complaint 12"),
            "{name}: {looks:?}"
        );
        let (_, mine) = o.get("/api/v1/me/memory", &o.ana).await;
        assert_eq!(
            mine["viewed_by"][0]["reason"], "complaint 12",
            "{name}: {mine}"
        );
    }
}

#[tokio::test]
async fn the_two_promises_are_on_every_surface_word_for_word() {
    assert_ne!(KEEP_PROMISE, TRAINING_PROMISE);
    assert!(!KEEP_PROMISE.contains("Your twin saves nothing unless you say so"));
    assert!(TRAINING_PROMISE.contains("train"));
    let readme = include_str!("../../README.md");
    for p in PROMISES {
        assert!(readme.contains(p), "README.md lacks: {p}");
    }
    for (name, db) in both_dbs().await {
        let o = Office::on(db).await;
        let (_, mine) = o.get("/api/v1/me/memory", &o.ana).await;
        assert_eq!(mine["promises"], json!(PROMISES), "{name}: {mine}");
        let chat = o.say(&o.ana, "/memory").await;
        for p in PROMISES {
            assert!(chat.contains(p), "{name}: /memory lacks {p}: {chat}");
        }
    }
    // The dashboard's own-memory view.
    let h = Harness::with_config(steward_tests::dashboard::config()).await;
    let mut c = steward_tests::dashboard::Client::new(h.services.clone());
    c.sign_in(steward_tests::dashboard::TOKEN).await;
    let page = c.get("/dashboard/memory?scope=mine").await.body;
    for p in PROMISES {
        assert!(
            page.contains(p),
            "the dashboard's own view lacks {p}: {page}"
        );
    }
}

/// First contact: the promises end a person's first turn after `/pair`
/// approval, and only that one.
#[tokio::test]
async fn the_promises_greet_a_person_once_after_pairing() {
    let h = Harness::new().await;
    h.pair("111", Role::Admin).await;
    let reply = h.dm("555", "/pair").await;
    let code: String = reply.split("code is ").nth(1).unwrap()[..8].to_string();
    assert!(!reply.contains(KEEP_PROMISE), "not before they are paired");
    h.dm("111", &format!("/pair approve {code}")).await;
    let first = h.dm("555", "hello").await;
    for p in PROMISES {
        assert!(first.contains(p), "first contact lacks {p}: {first}");
    }
    let second = h.dm("555", "hello again").await;
    assert!(
        !second.contains(KEEP_PROMISE),
        "not in every reply: {second}"
    );
    assert!(
        !h.dm("111", "hello").await.contains(KEEP_PROMISE),
        "paired directly: no /pair approval"
    );
}

#[tokio::test]
async fn a_person_promotes_their_own_record_but_not_an_episode() {
    for (name, db) in both_dbs().await {
        let o = Office::on(db).await;
        let episode =
            o.h.db()
                .records()
                .insert_record(&memory::NewRecord {
                    kind: "episodic".into(),
                    ..record(
                        "default",
                        Scope::Personal,
                        Some(ANA),
                        "last_trip",
                        "Ana went to Porto last week",
                        1,
                    )
                })
                .await
                .unwrap();
        let (s, e) = o
            .call(
                "POST",
                &format!("/api/v1/me/memory/{episode}/promote"),
                &o.ana,
                None,
            )
            .await;
        assert_eq!(
            (s, e["code"].as_str()),
            (
                StatusCode::UNPROCESSABLE_ENTITY,
                Some("kind_not_promotable")
            ),
            "{name}: {e}"
        );
        // Not hers (the admin asks): answered as a record that does not exist.
        let (s, _) = o
            .call(
                "POST",
                &format!("/api/v1/me/memory/{}/promote", o.personal),
                &o.admin,
                None,
            )
            .await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{name}");
        let (s, done) = o
            .call(
                "POST",
                &format!("/api/v1/me/memory/{}/promote", o.personal),
                &o.ana,
                None,
            )
            .await;
        assert_eq!(
            (s, done["promoted"].as_i64()),
            (StatusCode::OK, Some(o.personal)),
            "{name}: {done}"
        );
        let r = o.h.db().records().get("default", o.personal).await.unwrap();
        assert_eq!(r.scope, Scope::Person, "{name}");
    }
}

#[tokio::test]
async fn auto_keep_needs_the_operator_and_the_person() {
    for (name, operator) in [("operator off", false), ("operator on", true)] {
        let mut cfg = Config::default();
        cfg.memory.auto_keep = operator;
        let h = Harness::with_config(cfg).await;
        h.pair("222", Role::User).await;
        // Off by default: asked.
        let asked = h.dm("222", "I prefer tea").await;
        assert!(asked.contains("Remember this?"), "{name}: {asked}");
        h.dm("222", "no").await;
        assert!(h
            .dm("222", "/autokeep on")
            .await
            .contains("Auto-keep is on"));
        let reply = h.dm("222", "I prefer green tea in the morning").await;
        if operator {
            assert!(
                reply.contains("Written: personal memory") && !reply.contains("Remember this?"),
                "{name}: both on, kept: {reply}"
            );
        } else {
            assert!(
                reply.contains("Remember this?"),
                "{name}: the operator's ceiling: {reply}"
            );
        }
        let audit = h
            .db()
            .audit()
            .about("default", "settings.auto_keep", "discord:222")
            .await
            .unwrap();
        assert_eq!(audit.len(), 1, "{name}: the change is audited");
    }
    for (name, db) in both_dbs().await {
        let o = Office::on(db).await;
        let (s, v) = o.get("/api/v1/me/settings", &o.ana).await;
        assert_eq!(
            (s, &v),
            (StatusCode::OK, &json!({"auto_keep": false})),
            "{name}"
        );
        let (s, v) = o
            .call(
                "PUT",
                "/api/v1/me/settings",
                &o.ana,
                Some(json!({"auto_keep": true})),
            )
            .await;
        assert_eq!(
            (s, &v),
            (StatusCode::OK, &json!({"auto_keep": true})),
            "{name}"
        );
        let (_, v) = o.get("/api/v1/me/settings", &o.ana).await;
        assert_eq!(v["auto_keep"], true, "{name}: stored per person");
        let (_, v) = o.get("/api/v1/me/settings", &o.admin).await;
        assert_eq!(v["auto_keep"], false, "{name}: not the admin's");
        let (s, _) = o
            .call(
                "PUT",
                "/api/v1/me/settings",
                &o.ana,
                Some(json!({"auto_keep": "yes"})),
            )
            .await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{name}");
    }
}

/// What an API route does with one person's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reach {
    /// Nothing of anyone's personal memory.
    NoPersonalMemory,
    /// The caller's own memory only (`/api/v1/me/...`).
    OwnOnly,
    /// One person's individual records or direct conversation, with a
    /// reason, audited; never their person tier.
    OnePersonWithReason,
    /// Writes or deletes; reads back nothing of a person's memory.
    Change,
}

/// Every route of the OpenAPI document, classified. A new route must be added here.
const API_ROUTES: &[(&str, &str, Reach)] = &[
    // Work roles and role memory: roles are not memory; role entries are
    // shared and scrubbed of ids and personal data before they are stored.
    ("get", "/api/v1/users/{user}/roles", Reach::NoPersonalMemory),
    ("post", "/api/v1/users/{user}/roles", Reach::Change),
    ("delete", "/api/v1/users/{user}/roles/{role}", Reach::Change),
    ("post", "/api/v1/users/{user}/grants", Reach::Change),
    (
        "delete",
        "/api/v1/users/{user}/grants/{role}",
        Reach::Change,
    ),
    (
        "get",
        "/api/v1/roles/{role}/memory",
        Reach::NoPersonalMemory,
    ),
    ("post", "/api/v1/roles/{role}/memory", Reach::Change),
    ("patch", "/api/v1/role-memory/{id}", Reach::Change),
    ("post", "/api/v1/role-memory/{id}/accept", Reach::Change),
    ("post", "/api/v1/role-memory/{id}/confirm", Reach::Change),
    ("post", "/api/v1/role-memory/{id}/retire", Reach::Change),
    ("get", "/api/v1/openapi.json", Reach::NoPersonalMemory),
    ("post", "/api/v1/messages", Reach::OwnOnly),
    ("get", "/api/v1/me", Reach::OwnOnly),
    ("get", "/api/v1/me/memory", Reach::OwnOnly),
    ("get", "/api/v1/me/memory/{id}", Reach::OwnOnly),
    ("delete", "/api/v1/me/memory/{id}", Reach::OwnOnly),
    ("post", "/api/v1/me/memory/{id}/promote", Reach::OwnOnly),
    ("get", "/api/v1/me/settings", Reach::OwnOnly),
    ("put", "/api/v1/me/settings", Reach::OwnOnly),
    ("get", "/api/v1/me/export", Reach::OwnOnly),
    ("get", "/api/v1/me/search", Reach::OwnOnly),
    ("get", "/api/v1/me/delegates", Reach::OwnOnly),
    ("get", "/api/v1/me/keys", Reach::OwnOnly),
    ("post", "/api/v1/me/keys", Reach::OwnOnly),
    ("delete", "/api/v1/me/keys/{id}", Reach::OwnOnly),
    ("post", "/api/v1/me/delegates", Reach::OwnOnly),
    ("delete", "/api/v1/me/delegates/{delegate}", Reach::OwnOnly),
    ("get", "/api/v1/memory", Reach::OnePersonWithReason),
    ("get", "/api/v1/memory/search", Reach::OnePersonWithReason),
    ("get", "/api/v1/memory/{id}", Reach::OnePersonWithReason),
    ("delete", "/api/v1/memory/{id}", Reach::Change),
    ("get", "/api/v1/pairing/requests", Reach::NoPersonalMemory),
    (
        "post",
        "/api/v1/pairing/requests/{code}/approve",
        Reach::Change,
    ),
    (
        "post",
        "/api/v1/pairing/requests/{code}/deny",
        Reach::Change,
    ),
    ("get", "/api/v1/users", Reach::NoPersonalMemory),
    ("post", "/api/v1/users", Reach::Change),
    ("put", "/api/v1/users/{user}/role", Reach::Change),
    ("delete", "/api/v1/users/{user}", Reach::Change),
    ("post", "/api/v1/users/{user}/identities", Reach::Change),
    ("get", "/api/v1/keys", Reach::NoPersonalMemory),
    ("post", "/api/v1/keys", Reach::Change),
    ("delete", "/api/v1/keys/{id}", Reach::Change),
    ("get", "/api/v1/revisions", Reach::NoPersonalMemory),
    ("post", "/api/v1/revisions/{id}/undo", Reach::Change),
    ("post", "/api/v1/runs/{run}/undo", Reach::Change),
    ("get", "/api/v1/review", Reach::NoPersonalMemory),
    ("post", "/api/v1/review/{id}/confirm", Reach::Change),
    ("post", "/api/v1/review/{id}/reject", Reach::Change),
    ("get", "/api/v1/policy", Reach::NoPersonalMemory),
    ("post", "/api/v1/policy", Reach::Change),
    ("delete", "/api/v1/policy/{id}", Reach::Change),
    ("get", "/api/v1/archives", Reach::NoPersonalMemory),
    ("get", "/api/v1/archives/{id}", Reach::OnePersonWithReason),
    ("post", "/api/v1/archives/{id}/relearn", Reach::Change),
    ("get", "/api/v1/skills", Reach::NoPersonalMemory),
    ("get", "/api/v1/skills/{id}", Reach::NoPersonalMemory),
    ("post", "/api/v1/skills/{id}/approve", Reach::Change),
    ("post", "/api/v1/skills/{id}/reject", Reach::Change),
    ("post", "/api/v1/skills/{id}/rollback", Reach::Change),
    ("post", "/api/v1/skills/{slug}/run", Reach::Change),
    // External tools' listings: what servers list, never anyone's memory.
    ("get", "/api/v1/tools", Reach::NoPersonalMemory),
    ("get", "/api/v1/tools/{id}", Reach::NoPersonalMemory),
    ("post", "/api/v1/tools/{id}/approve", Reach::Change),
    ("post", "/api/v1/tools/{id}/reject", Reach::Change),
    ("post", "/api/v1/tools/{id}/suspend", Reach::Change),
    ("get", "/api/v1/runs", Reach::NoPersonalMemory),
    ("get", "/api/v1/runs/{id}", Reach::NoPersonalMemory),
    ("get", "/api/v1/audit", Reach::NoPersonalMemory),
];

#[tokio::test]
async fn no_admin_route_returns_or_aggregates_one_persons_memory() {
    for (name, db) in both_dbs().await {
        let o = Office::on(db).await;
        o.archive_anas_conversation().await;
        let (s, doc) = o.get("/api/v1/openapi.json", &o.admin).await;
        assert_eq!(s, StatusCode::OK, "{name}");
        let mut served: Vec<(String, String)> = Vec::new();
        for (path, item) in doc["paths"].as_object().unwrap() {
            for method in item.as_object().unwrap().keys() {
                if ["get", "post", "put", "delete", "patch"].contains(&method.as_str()) {
                    served.push((method.clone(), path.clone()));
                }
            }
        }
        served.sort();
        let mut table: Vec<(String, String)> = API_ROUTES
            .iter()
            .map(|(m, p, _)| (m.to_string(), p.to_string()))
            .collect();
        table.sort();
        assert_eq!(
            served, table,
            "{name}: every route of the OpenAPI document is classified in API_ROUTES"
        );
        // Each admin read without path parameters, called as the admin with
        // no reason: nothing of Ana's, and never her person tier.
        for (method, path, reach) in API_ROUTES {
            if *method != "get" || path.contains('{') || path.starts_with("/api/v1/me") {
                continue;
            }
            let (s, body) = o.get(path, &o.admin).await;
            assert!(
                !shows_person_tier(&body),
                "{name}: {path} shows the person tier"
            );
            if *reach == Reach::NoPersonalMemory || *reach == Reach::OnePersonWithReason {
                assert!(
                    !body.to_string().contains("Portuguese"),
                    "{name}: {path} ({s}) shows a person's records without a reason"
                );
            }
        }
        // The one-person reads, with a reason: never the person tier.
        for path in [
            format!("/api/v1/memory?owner={ANA}&reason=r"),
            format!("/api/v1/memory/search?q=Lisbon%20mornings&as={ANA}&reason=r"),
            format!("/api/v1/memory?owner={ANA}&reason=r&status=active"),
        ] {
            let (_, body) = o.get(&path, &o.admin).await;
            assert!(!shows_person_tier(&body), "{name}: {path}: {body}");
        }
    }
}

/// What a `steward` command does with one person's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CliReach {
    /// Nothing of anyone's personal memory.
    NoPersonalMemory,
    /// One person's individual records or direct conversation, with
    /// `--reason`, audited; never their person tier.
    OnePersonWithReason,
    /// Changes something; prints nothing of a person's memory.
    Change,
}

/// Every `steward` subcommand, classified. A new command must be added here.
const CLI_COMMANDS: &[(&str, CliReach)] = &[
    ("api-key", CliReach::NoPersonalMemory),
    ("api-key create", CliReach::Change),
    ("api-key list", CliReach::NoPersonalMemory),
    ("api-key revoke", CliReach::Change),
    ("backup", CliReach::Change),
    ("chat", CliReach::NoPersonalMemory),
    ("dashboard", CliReach::NoPersonalMemory),
    ("dashboard reset-token", CliReach::Change),
    ("delegate", CliReach::NoPersonalMemory),
    ("delegate add", CliReach::Change),
    ("delegate list", CliReach::NoPersonalMemory),
    ("delegate remove", CliReach::Change),
    ("memory", CliReach::NoPersonalMemory),
    ("memory archives", CliReach::NoPersonalMemory),
    ("memory archives list", CliReach::NoPersonalMemory),
    ("memory archives show", CliReach::OnePersonWithReason),
    ("memory distill", CliReach::Change),
    ("memory erase", CliReach::Change),
    ("memory expire", CliReach::Change),
    ("memory export", CliReach::NoPersonalMemory),
    ("memory forget", CliReach::Change),
    ("memory import", CliReach::Change),
    ("memory list", CliReach::OnePersonWithReason),
    ("memory policy", CliReach::NoPersonalMemory),
    ("memory policy add", CliReach::Change),
    ("memory policy list", CliReach::NoPersonalMemory),
    ("memory policy retire", CliReach::Change),
    ("memory relearn", CliReach::Change),
    ("memory review", CliReach::NoPersonalMemory),
    ("memory review confirm", CliReach::Change),
    ("memory review list", CliReach::NoPersonalMemory),
    ("memory review reject", CliReach::Change),
    ("memory revisions", CliReach::NoPersonalMemory),
    ("memory revisions list", CliReach::NoPersonalMemory),
    ("memory revisions undo", CliReach::Change),
    ("memory role", CliReach::NoPersonalMemory),
    ("memory role accept", CliReach::Change),
    ("memory role list", CliReach::NoPersonalMemory),
    ("memory role propose", CliReach::Change),
    ("memory role retire", CliReach::Change),
    ("memory search", CliReach::OnePersonWithReason),
    ("memory show", CliReach::OnePersonWithReason),
    ("pairing", CliReach::NoPersonalMemory),
    ("pairing add", CliReach::Change),
    ("pairing approve", CliReach::Change),
    ("pairing deny", CliReach::Change),
    ("pairing grant", CliReach::Change),
    ("pairing link", CliReach::Change),
    ("pairing list", CliReach::NoPersonalMemory),
    ("pairing revoke", CliReach::Change),
    ("pairing roles", CliReach::NoPersonalMemory),
    ("pairing set-role", CliReach::Change),
    ("pairing ungrant", CliReach::Change),
    ("replay", CliReach::NoPersonalMemory),
    ("runs", CliReach::NoPersonalMemory),
    ("runs list", CliReach::NoPersonalMemory),
    ("runs show", CliReach::NoPersonalMemory),
    ("serve", CliReach::NoPersonalMemory),
    ("skills", CliReach::NoPersonalMemory),
    ("skills approve", CliReach::Change),
    ("skills export", CliReach::NoPersonalMemory),
    ("skills import", CliReach::Change),
    ("skills list", CliReach::NoPersonalMemory),
    ("skills reject", CliReach::Change),
    ("skills revisions", CliReach::NoPersonalMemory),
    ("skills rollback", CliReach::Change),
    ("skills run", CliReach::Change),
    ("skills show", CliReach::NoPersonalMemory),
    ("tools", CliReach::NoPersonalMemory),
    ("tools approve", CliReach::Change),
    ("tools list", CliReach::NoPersonalMemory),
    ("tools reject", CliReach::Change),
    ("tools show", CliReach::NoPersonalMemory),
    ("tools suspend", CliReach::Change),
];

/// Every command path of the real clap tree, e.g. `memory archives show`.
fn commands(cmd: &clap::Command, prefix: &str, out: &mut Vec<String>) {
    for sub in cmd.get_subcommands().filter(|c| c.get_name() != "help") {
        let path = if prefix.is_empty() {
            sub.get_name().to_string()
        } else {
            format!("{prefix} {}", sub.get_name())
        };
        commands(sub, &path, out);
        out.push(path);
    }
}

#[test]
fn every_cli_command_is_classified_and_none_aggregates_a_persons_memory() {
    let mut real = Vec::new();
    commands(&steward::cli::Cli::command(), "", &mut real);
    real.sort();
    let mut table: Vec<String> = CLI_COMMANDS.iter().map(|(c, _)| c.to_string()).collect();
    table.sort();
    assert_eq!(
        table, real,
        "every steward subcommand is classified in CLI_COMMANDS"
    );
    for must in ["delegate add", "delegate remove", "delegate list"] {
        assert!(real.iter().any(|c| c == must), "{must}");
    }
    let personal: Vec<&str> = CLI_COMMANDS
        .iter()
        .filter(|(_, r)| *r == CliReach::OnePersonWithReason)
        .map(|(c, _)| *c)
        .collect();
    assert_eq!(
        personal,
        [
            "memory archives show",
            "memory list",
            "memory search",
            "memory show"
        ],
        "only these read one person's memory, each with --reason"
    );
    // Each of them takes --reason.
    let cli = steward::cli::Cli::command();
    for path in personal {
        let mut cmd = &cli;
        for word in path.split(' ') {
            cmd = cmd.find_subcommand(word).unwrap();
        }
        assert!(
            cmd.get_arguments().any(|a| a.get_id() == "reason"),
            "{path} takes --reason"
        );
    }
}

/// Undoing a revision of a person's own records does not hand their text
/// back to the administrator: `restored` is left out, as oversight shows a
/// person's records only on a reasoned read.
#[tokio::test]
async fn undoing_a_persons_revision_shows_the_admin_none_of_their_text() {
    for (name, db) in both_dbs().await {
        let o = Office::on(db).await;
        let mut said = Vec::new();
        for text in [
            "Reply to me in English",
            "yes",
            "Reply to me in Spanish",
            "yes",
        ] {
            said.push(o.say(&o.ana, text).await);
        }
        let (s, page) = o.get("/api/v1/revisions", &o.admin).await;
        assert_eq!(s, StatusCode::OK, "{name}: {page}");
        let rev = page["items"]
            .as_array()
            .and_then(|items| items.first())
            .unwrap_or_else(|| panic!("{name}: no revision after {said:?}: {page}"))
            .clone();
        assert!(!page.to_string().contains("English"), "{name}: {page}");
        let (s, done) = o
            .call(
                "POST",
                &format!("/api/v1/revisions/{}/undo", rev["id"]),
                &o.admin,
                Some(json!({})),
            )
            .await;
        assert_eq!(s, StatusCode::OK, "{name}: {done}");
        assert_eq!(done["undone"], true, "{name}: {done}");
        assert!(done["restored"].is_null(), "{name}: {done}");
        assert!(!done.to_string().contains("English"), "{name}: {done}");
    }
}
