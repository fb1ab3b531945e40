//! The REST API v1 (`steward::api`): each endpoint in-process with `oneshot`
//! on both databases where it touches storage, the OpenAPI document against
//! the router, roles (a user's key on every admin operation), one person's
//! memory against another's, errors, pages, the rate limit, and a real socket.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use memory::write::RawWrites;
use memory::{Db, Role, Scope, Status};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use steward::config::Config;
use steward::http::{app, serve, AppState};
use steward_tests::{both_dbs, record, Harness};
use tower::ServiceExt;

/// A harness with an admin (`discord:111`), two users (`discord:222`,
/// `discord:333`), a key for each, and the app.
struct Api {
    h: Harness,
    app: axum::Router,
    admin: String,
    bob: String,
    carol: String,
}

async fn api_on(db: Db, cfg: Config) -> Api {
    let h = Harness::on(db, cfg);
    h.pair("111", Role::Admin).await;
    h.pair("222", Role::User).await;
    h.pair("333", Role::User).await;
    let key = |user: &'static str| {
        let p = h.services.pairing().clone();
        async move {
            p.create_api_key("default", user, "test", 1)
                .await
                .unwrap()
                .key
        }
    };
    let (admin, bob, carol) = (
        key("discord:111").await,
        key("discord:222").await,
        key("discord:333").await,
    );
    let app = app(AppState::new(h.services.clone()));
    Api {
        h,
        app,
        admin,
        bob,
        carol,
    }
}

async fn api() -> Api {
    api_on(Db::in_memory().await.unwrap(), Config::default()).await
}

impl Api {
    /// `method path` with `key` (none: no Authorization) and a JSON `body`.
    async fn call(
        &self,
        method: &str,
        path: &str,
        key: Option<&str>,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let mut b = Request::builder().method(method).uri(path);
        if let Some(k) = key {
            b = b.header("authorization", format!("Bearer {k}"));
        }
        let req = match body {
            Some(v) => b
                .header("content-type", "application/json")
                .body(Body::from(v.to_string())),
            None => b.body(Body::empty()),
        }
        .unwrap();
        let resp = self.app.clone().oneshot(req).await.unwrap();
        let status = resp.status();
        let bytes = resp.into_body().collect().await.unwrap().to_bytes();
        (
            status,
            serde_json::from_slice(&bytes)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned())),
        )
    }

    async fn get(&self, path: &str, key: &str) -> (StatusCode, Value) {
        self.call("GET", path, Some(key), None).await
    }

    async fn post(&self, path: &str, key: &str, body: Value) -> (StatusCode, Value) {
        self.call("POST", path, Some(key), Some(body)).await
    }

    async fn delete(&self, path: &str, key: &str) -> (StatusCode, Value) {
        self.call("DELETE", path, Some(key), None).await
    }

    fn db(&self) -> &Db {
        self.h.db()
    }

    /// The ids of every page of the list at `path` (with a query), following `next`.
    async fn every_page(&self, path: &str) -> Vec<i64> {
        let mut seen = Vec::new();
        let mut at = path.to_string();
        loop {
            let (s, page) = self.get(&at, &self.admin).await;
            assert_eq!(s, StatusCode::OK, "{at}: {page}");
            seen.extend(ids(&page));
            match page["next"].as_str() {
                Some(next) => at = format!("{path}&cursor={next}"),
                None => return seen,
            }
        }
    }

    /// A record written straight to the store, active.
    async fn record(&self, scope: Scope, owner: Option<&str>, subject: &str, content: &str) -> i64 {
        let at = self.h.tick().timestamp_millis();
        let id = self
            .db()
            .records()
            .insert_record(&record("default", scope, owner, subject, content, at))
            .await
            .unwrap();
        self.db()
            .records()
            .activate_kept(
                "default",
                id,
                memory::Cause::Live,
                "test",
                at,
                &memory::write::NoRevision,
            )
            .await
            .unwrap();
        id
    }
}

fn ids(page: &Value) -> Vec<i64> {
    page["items"]
        .as_array()
        .unwrap_or_else(|| panic!("no items in {page}"))
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect()
}

fn is_iso(v: &Value) -> bool {
    v.as_str()
        .is_some_and(|s| chrono::DateTime::parse_from_rfc3339(s).is_ok())
}

// ------------------------------------------------------------ the document

/// Every operation of the OpenAPI document: (method, path, tags).
fn operations(doc: &Value) -> Vec<(String, String, Vec<String>)> {
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, op) in item.as_object().unwrap() {
            let tags = op["tags"]
                .as_array()
                .map(|t| t.iter().map(|t| t.as_str().unwrap().to_string()).collect())
                .unwrap_or_default();
            out.push((method.to_uppercase(), path.clone(), tags));
        }
    }
    out
}

/// A concrete path for a templated one (ids nobody has).
fn concrete(path: &str) -> String {
    path.replace("{id}", "999999")
        .replace("{user}", "discord:nobody")
        .replace("{code}", "NOSUCHCD")
        .replace("{run}", "no-such-run")
        .replace("{slug}", "no-such-skill")
}

/// The Rust sources of the gateway, as (path, text).
fn gateway_sources() -> Vec<(String, String)> {
    fn walk(dir: &std::path::Path, out: &mut Vec<(String, String)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "rs") {
                out.push((
                    p.display().to_string(),
                    std::fs::read_to_string(&p).unwrap(),
                ));
            }
        }
    }
    let gateway = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../gateway");
    let mut out = Vec::new();
    for layer in ["src", "core/src", "channels/src", "web/src"] {
        walk(&gateway.join(layer), &mut out);
    }
    out
}

/// One name for one thing: the document keeps one schema a name, so two
/// Rust types under one name would document one route's body with the
/// other's. Every name the routes give is one schema, the one the document
/// holds, and the pairing approve route documents the `{"role"}` it accepts
/// (it once documented skills' `{"hash"}`).
#[test]
fn every_schema_name_is_one_type_and_each_route_documents_its_own_body() {
    let doc = serde_json::to_value(steward::api::openapi()).unwrap();
    let schemas = &doc["components"]["schemas"];
    let mut collisions = BTreeSet::new();
    for (name, schema) in steward::api::route_schemas() {
        if schemas[&name] != schema {
            collisions.insert(name);
        }
    }
    assert!(
        collisions.is_empty(),
        "schema names two routes give different types under: {collisions:?}"
    );
    let approve = &doc["paths"]["/api/v1/pairing/requests/{code}/approve"]["post"];
    let body = approve["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        .as_str()
        .unwrap_or_else(|| panic!("no request body: {approve}"));
    let name = body.trim_start_matches("#/components/schemas/");
    let fields = schemas[name]["properties"].as_object().unwrap();
    assert_eq!(
        fields.keys().collect::<Vec<_>>(),
        ["role"],
        "{name}: {}",
        schemas[name]
    );
}

#[tokio::test]
async fn the_openapi_document_is_3_1_with_bearer_auth_and_every_served_route() {
    let a = api().await;
    let (s, doc) = a.call("GET", "/api/v1/openapi.json", None, None).await;
    assert_eq!(s, StatusCode::OK, "served without a key: {doc}");
    assert!(
        doc["openapi"]
            .as_str()
            .is_some_and(|v| v.starts_with("3.1")),
        "{}",
        doc["openapi"]
    );
    assert_eq!(
        doc["components"]["securitySchemes"]["bearer"]["scheme"],
        "bearer"
    );
    assert_eq!(doc, serde_json::to_value(steward::api::openapi()).unwrap());
    let ops = operations(&doc);
    assert!(ops.len() >= 30, "{ops:?}");
    // Every documented operation is served (not the fallback, not 405).
    for (method, path, _) in &ops {
        let body = (method != "GET" && method != "DELETE").then(|| json!({}));
        let (s, answer) = a.call(method, &concrete(path), Some(&a.admin), body).await;
        assert_ne!(s, StatusCode::METHOD_NOT_ALLOWED, "{method} {path}");
        assert!(
            !answer["error"]
                .as_str()
                .unwrap_or("")
                .contains("no such route"),
            "{method} {path} is documented but not served: {answer}"
        );
        assert!(s.as_u16() < 500, "{method} {path}: {s} {answer}");
    }
    // Every route the gateway serves under /api/ is declared with
    // `#[utoipa::path]` and mounted through `routes!`, which puts it in the
    // document: no plain `.route("/api…")`, and every declared path is documented.
    let documented: BTreeSet<String> = ops.iter().map(|(_, p, _)| p.clone()).collect();
    for (file, text) in gateway_sources() {
        assert!(
            !text.contains(".route(\"/api"),
            "{file} mounts an /api route outside the documented router"
        );
        for decl in text.split("#[utoipa::path(").skip(1) {
            let path = decl
                .split("path = \"")
                .nth(1)
                .and_then(|rest| rest.split('"').next())
                .unwrap_or_else(|| panic!("{file}: a utoipa::path without a path"));
            assert!(
                documented.contains(path),
                "{file}: {path} is declared but not in the document"
            );
        }
    }
    // No such route: JSON 404; a wrong method: JSON 405.
    let (s, body) = a.get("/api/v1/nothing-here", &a.admin).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    assert!(body["error"].is_string(), "{body}");
    let (s, body) = a
        .call("PATCH", "/api/v1/memory", Some(&a.admin), None)
        .await;
    assert_eq!(s, StatusCode::METHOD_NOT_ALLOWED);
    assert!(body["error"].is_string(), "{body}");
}

// ------------------------------------------------------------ roles

#[tokio::test]
async fn a_user_key_is_refused_on_every_admin_operation_and_no_key_on_any() {
    let a = api().await;
    let policy = a
        .record(
            Scope::OrgPolicy,
            None,
            "expenses",
            "Expenses need a receipt",
        )
        .await;
    let before = a
        .db()
        .records()
        .list("default", &Default::default())
        .await
        .unwrap();
    let users_before = a.h.services.pairing().users("default").await.unwrap();
    let doc = serde_json::to_value(steward::api::openapi()).unwrap();
    let mut admin_ops = 0;
    for (method, path, tags) in operations(&doc) {
        if tags.iter().any(|t| t == "meta") {
            continue;
        }
        let path = concrete(&path).replace("999999", &policy.to_string());
        let body = (method != "GET" && method != "DELETE").then(
            || json!({"role": "admin", "user_id": "discord:222", "text": "x", "identity": "x:1"}),
        );
        let (s, answer) = a.call(&method, &path, None, body.clone()).await;
        assert_eq!(
            s,
            StatusCode::UNAUTHORIZED,
            "{method} {path} without a key: {answer}"
        );
        assert!(answer["error"].is_string());
        let (s, _) = a
            .call(&method, &path, Some("stw_not_a_key"), body.clone())
            .await;
        assert_eq!(
            s,
            StatusCode::UNAUTHORIZED,
            "{method} {path} with a wrong key"
        );
        // Role memory is for a role's holders and managers, not administrators
        // alone: its refusals are in tests/tests/roles.rs.
        if tags
            .iter()
            .any(|t| t == "me" || t == "messages" || t == "role_memory")
        {
            continue;
        }
        admin_ops += 1;
        let (s, answer) = a.call(&method, &path, Some(&a.bob), body).await;
        assert_eq!(
            s,
            StatusCode::FORBIDDEN,
            "{method} {path} with a user key: {answer}"
        );
        assert!(
            answer["error"].as_str().unwrap().contains("admin"),
            "{answer}"
        );
    }
    assert!(admin_ops >= 25, "{admin_ops}");
    // Nothing changed: no record, no pairing.
    assert_eq!(
        a.db()
            .records()
            .list("default", &Default::default())
            .await
            .unwrap(),
        before
    );
    assert_eq!(
        a.h.services.pairing().users("default").await.unwrap(),
        users_before
    );
    // The role is the pairing store's: a user promoted is an admin at once, with the same key.
    a.h.services
        .pairing()
        .set_role("default", "discord:222", Role::Admin, "test", 2)
        .await
        .unwrap();
    let (s, _) = a.get("/api/v1/audit", &a.bob).await;
    assert_eq!(s, StatusCode::OK);
}

#[tokio::test]
async fn me_says_who_the_key_is() {
    let a = api().await;
    let (s, me) = a.get("/api/v1/me", &a.bob).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(
        (
            me["user_id"].as_str(),
            me["role"].as_str(),
            me["org"].as_str()
        ),
        (Some("discord:222"), Some("user"), Some("default"))
    );
    let (_, me) = a.get("/api/v1/me", &a.admin).await;
    assert_eq!(me["role"], "admin");
}

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

// ------------------------------------------------------------ pairing

#[tokio::test]
async fn admins_approve_deny_add_set_roles_revoke_and_link() {
    for (name, db) in both_dbs().await {
        let a = api_on(db, Config::default()).await;
        let code = steward_tests::dashboard::pair_request(&a.h.turns, "444").await;
        let other = steward_tests::dashboard::pair_request(&a.h.turns, "555").await;
        let (s, page) = a.get("/api/v1/pairing/requests", &a.admin).await;
        assert_eq!(s, StatusCode::OK, "{name}: {page}");
        let codes: Vec<&str> = page["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["code"].as_str().unwrap())
            .collect();
        assert!(
            codes.contains(&code.as_str()) && codes.contains(&other.as_str()),
            "{name}: {page}"
        );
        assert!(is_iso(&page["items"][0]["expires_at"]), "{name}");
        let (s, _) = a.get("/api/v1/pairing/requests?limit=1", &a.admin).await;
        assert_eq!(s, StatusCode::OK, "{name}");
        // Approve with a role (the code in any case), once.
        let path = format!("/api/v1/pairing/requests/{}/approve", code.to_lowercase());
        let (s, u) = a.post(&path, &a.admin, json!({"role": "user"})).await;
        assert_eq!(
            (s, u["role"].as_str()),
            (StatusCode::OK, Some("user")),
            "{name}: {u}"
        );
        let who = u["user_id"].as_str().unwrap().to_string();
        let (s, e) = a.post(&path, &a.admin, json!({"role": "admin"})).await;
        assert_eq!(s, StatusCode::CONFLICT, "{name}: {e}");
        let (s, _) = a.post(&path, &a.admin, json!({"role": "king"})).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{name}");
        // Deny.
        let (s, r) = a
            .post(
                &format!("/api/v1/pairing/requests/{other}/deny"),
                &a.admin,
                json!({}),
            )
            .await;
        assert_eq!(
            (s, r["status"].as_str()),
            (StatusCode::OK, Some("denied")),
            "{name}: {r}"
        );
        let (s, _) = a
            .post(
                "/api/v1/pairing/requests/NOSUCHCD/deny",
                &a.admin,
                json!({}),
            )
            .await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{name}");
        // Add directly with a role; twice is a conflict.
        let (s, u) = a
            .post(
                "/api/v1/users",
                &a.admin,
                json!({"user_id": "teams:dana", "name": "Dana", "role": "admin"}),
            )
            .await;
        assert_eq!(
            (s, u["role"].as_str(), u["name"].as_str()),
            (StatusCode::CREATED, Some("admin"), Some("Dana")),
            "{name}: {u}"
        );
        let resolved =
            a.h.services
                .pairing()
                .resolve("default", "teams:dana")
                .await
                .unwrap()
                .unwrap();
        assert_eq!(resolved.role, Role::Admin, "{name}");
        let (s, _) = a
            .post(
                "/api/v1/users",
                &a.admin,
                json!({"user_id": "teams:dana", "role": "user"}),
            )
            .await;
        assert_eq!(s, StatusCode::CONFLICT, "{name}");
        let (s, _) = a
            .post(
                "/api/v1/users",
                &a.admin,
                json!({"user_id": "  ", "role": "user"}),
            )
            .await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{name}");
        let added = a
            .db()
            .audit()
            .about("default", "pairing.add", "teams:dana")
            .await
            .unwrap();
        assert_eq!(added[0].actor, "discord:111", "{name}");
        // Set a role.
        let (s, u) = a
            .call(
                "PUT",
                &format!("/api/v1/users/{who}/role"),
                Some(&a.admin),
                Some(json!({"role": "admin"})),
            )
            .await;
        assert_eq!(
            (s, u["role"].as_str()),
            (StatusCode::OK, Some("admin")),
            "{name}: {u}"
        );
        let (s, _) = a
            .call(
                "PUT",
                "/api/v1/users/discord:nobody/role",
                Some(&a.admin),
                Some(json!({"role": "admin"})),
            )
            .await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{name}");
        // Link another identity: it speaks as the same person.
        let (s, u) = a
            .post(
                &format!("/api/v1/users/{who}/identities"),
                &a.admin,
                json!({"identity": "teams:444"}),
            )
            .await;
        assert_eq!(s, StatusCode::OK, "{name}: {u}");
        let linked =
            a.h.services
                .pairing()
                .resolve("default", "teams:444")
                .await
                .unwrap()
                .unwrap();
        assert_eq!(linked.user_id, who, "{name}");
        // Users list, paged by id.
        let (s, page) = a.get("/api/v1/users?limit=2", &a.admin).await;
        assert_eq!(
            (s, page["items"].as_array().unwrap().len()),
            (StatusCode::OK, 2),
            "{name}"
        );
        let next = page["next"].as_str().unwrap().to_string();
        let (_, rest) = a
            .get(&format!("/api/v1/users?cursor={next}"), &a.admin)
            .await;
        assert!(
            rest["items"]
                .as_array()
                .unwrap()
                .iter()
                .all(|u| u["user_id"].as_str().unwrap() > next.as_str()),
            "{name}"
        );
        // Revoke: their keys go with them.
        let (s, r) = a.delete("/api/v1/users/discord:222", &a.admin).await;
        assert_eq!(
            (s, r["revoked_keys"].as_array().map(Vec::len)),
            (StatusCode::OK, Some(1)),
            "{name}: {r}"
        );
        let (s, _) = a.get("/api/v1/me", &a.bob).await;
        assert_eq!(s, StatusCode::UNAUTHORIZED, "{name}: a revoked user's key");
        // The built-in dashboard admin keeps its role.
        steward::dashboard::ensure_admin_user(&a.h.services)
            .await
            .unwrap();
        let (s, _) = a.delete("/api/v1/users/admin", &a.admin).await;
        assert_eq!(s, StatusCode::CONFLICT, "{name}");
    }
}

// ------------------------------------------------------------ keys

#[tokio::test]
async fn a_key_acts_as_its_maker_and_admins_list_and_revoke_keys() {
    for (name, db) in both_dbs().await {
        let a = api_on(db, Config::default()).await;
        // An administrator mints no key that acts as someone else (the
        // attack: mint Carol's key, then read her memory as her).
        let (s, e) = a
            .post("/api/v1/keys", &a.admin, json!({"user_id": "discord:333"}))
            .await;
        assert_eq!(s, StatusCode::FORBIDDEN, "{name}: {e}");
        assert!(
            e["error"].as_str().unwrap().contains("made it"),
            "{name}: {e}"
        );
        // Carol makes her own; it acts as her.
        let (s, new) = a.post("/api/v1/me/keys", &a.carol, json!({})).await;
        assert_eq!(s, StatusCode::CREATED, "{name}: {new}");
        let (id, key) = (
            new["id"].as_str().unwrap().to_string(),
            new["key"].as_str().unwrap().to_string(),
        );
        let (s, me) = a.get("/api/v1/me", &key).await;
        assert_eq!(
            (s, me["user_id"].as_str()),
            (StatusCode::OK, Some("discord:333")),
            "{name}"
        );
        // She lists her keys (never a secret); Bob's list holds none of hers.
        let (s, mine) = a.get("/api/v1/me/keys", &a.carol).await;
        assert_eq!(s, StatusCode::OK, "{name}");
        assert_eq!(mine.as_array().unwrap().len(), 2, "{name}: {mine}");
        assert!(!mine.to_string().contains(&key), "{name}");
        let (_, bobs) = a.get("/api/v1/me/keys", &a.bob).await;
        assert!(!bobs.to_string().contains(&id), "{name}: {bobs}");
        // Bob cannot revoke Carol's key: it is not his.
        let (s, _) = a.delete(&format!("/api/v1/me/keys/{id}"), &a.bob).await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{name}");
        // An administrator lists and revokes anyone's.
        let (s, page) = a.get("/api/v1/keys?user=discord:333", &a.admin).await;
        assert_eq!(s, StatusCode::OK, "{name}");
        assert_eq!(page["items"].as_array().unwrap().len(), 2, "{name}: {page}");
        assert!(
            !page.to_string().contains(&key),
            "{name}: a list never shows a secret"
        );
        assert!(is_iso(&page["items"][0]["created_at"]), "{name}");
        let (s, k) = a.delete(&format!("/api/v1/keys/{id}"), &a.admin).await;
        assert_eq!(
            (s, k["revoked_by"].as_str()),
            (StatusCode::OK, Some("discord:111")),
            "{name}: {k}"
        );
        assert!(is_iso(&k["revoked_at"]), "{name}");
        let (s, _) = a.get("/api/v1/me", &key).await;
        assert_eq!(s, StatusCode::UNAUTHORIZED, "{name}: a revoked key");
        let (s, _) = a.delete(&format!("/api/v1/keys/{id}"), &a.admin).await;
        assert_eq!(s, StatusCode::CONFLICT, "{name}");
        let (s, _) = a.delete("/api/v1/keys/key-NOSUCHID", &a.admin).await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{name}");
        // Carol revokes a key of her own herself.
        let (_, second) = a.post("/api/v1/me/keys", &a.carol, json!({})).await;
        let second_id = second["id"].as_str().unwrap();
        let (s, k) = a
            .delete(&format!("/api/v1/me/keys/{second_id}"), &a.carol)
            .await;
        assert_eq!(
            (s, k["revoked_by"].as_str()),
            (StatusCode::OK, Some("discord:333")),
            "{name}: {k}"
        );
        // The admin's own key, through either route.
        let (s, own) = a
            .post("/api/v1/keys", &a.admin, json!({"user_id": "discord:111"}))
            .await;
        assert_eq!(s, StatusCode::CREATED, "{name}: {own}");
        let (s, _) = a
            .post("/api/v1/keys", &a.admin, json!({"user": "discord:333"}))
            .await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{name}");
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

// ------------------------------------------------------------ errors and limits

// ------------------------------------------------------------ skills

/// A proposal of `slug` for the `default` agent, straight to the store.
async fn propose_skill(db: &Db, slug: &str, body: &str, at: i64) -> memory::skill::SkillRevision {
    db.skills()
        .propose(&memory::store::NewProposal {
            org: "default",
            agent: "default",
            slug,
            description: "How to answer requests for the daily report.",
            body,
            evidence: &[],
            corrections: &[],
            proposed_by: "test",
            at,
        })
        .await
        .unwrap()
}

async fn skill_status(db: &Db, id: i64) -> memory::skill::SkillStatus {
    db.skills().revision("default", id).await.unwrap().status
}

async fn in_force(db: &Db) -> Vec<i64> {
    db.skills()
        .active("default", "default")
        .await
        .unwrap()
        .iter()
        .map(|r| r.id)
        .collect()
}

#[tokio::test]
async fn admins_review_approve_reject_and_roll_back_skills() {
    use memory::skill::SkillStatus;
    for (name, db) in both_dbs().await {
        let a = api_on(db, Config::default()).await;
        let at = a.h.tick().timestamp_millis();
        let p1 = propose_skill(a.db(), "daily-report", "- Leave refunds out", at).await;
        // A user's key: 403 on every skills route, and nothing changes.
        for (method, path, body) in [
            ("GET", "/api/v1/skills".to_string(), None),
            ("GET", format!("/api/v1/skills/{}", p1.id), None),
            (
                "POST",
                format!("/api/v1/skills/{}/approve", p1.id),
                Some(json!({"hash": p1.hash})),
            ),
            (
                "POST",
                format!("/api/v1/skills/{}/reject", p1.id),
                Some(json!({})),
            ),
            (
                "POST",
                format!("/api/v1/skills/{}/rollback", p1.id),
                Some(json!({"to": null})),
            ),
        ] {
            let (s, e) = a.call(method, &path, Some(&a.bob), body).await;
            assert_eq!(s, StatusCode::FORBIDDEN, "{name}: {method} {path}: {e}");
            assert!(
                e["error"].as_str().unwrap().contains("admin"),
                "{name}: {e}"
            );
        }
        assert_eq!(
            skill_status(a.db(), p1.id).await,
            SkillStatus::Proposed,
            "{name}"
        );
        assert!(in_force(a.db()).await.is_empty(), "{name}");
        // Lists, by status, and the review.
        let (s, page) = a.get("/api/v1/skills", &a.admin).await;
        assert_eq!(
            (s, ids(&page)),
            (StatusCode::OK, vec![p1.id]),
            "{name}: {page}"
        );
        let (_, page) = a.get("/api/v1/skills?status=proposed", &a.admin).await;
        assert_eq!(ids(&page), vec![p1.id], "{name}");
        let (_, page) = a.get("/api/v1/skills?status=active", &a.admin).await;
        assert!(ids(&page).is_empty(), "{name}");
        let (s, e) = a.get("/api/v1/skills?status=bogus", &a.admin).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{name}: {e}");
        let (s, review) = a.get(&format!("/api/v1/skills/{}", p1.id), &a.admin).await;
        assert_eq!(s, StatusCode::OK, "{name}: {review}");
        assert_eq!(review["revision"]["hash"], p1.hash.as_str(), "{name}");
        assert!(
            review["diff"]
                .as_str()
                .unwrap()
                .contains("+- Leave refunds out"),
            "{name}: {review}"
        );
        // A stale hash: 409 naming why, and nothing changes.
        let approve = |id: i64| format!("/api/v1/skills/{id}/approve");
        let (s, e) = a
            .post(
                &approve(p1.id),
                &a.admin,
                json!({"hash": "00000000deadbeef"}),
            )
            .await;
        assert_eq!(s, StatusCode::CONFLICT, "{name}: {e}");
        assert!(
            e["error"].as_str().unwrap().contains("changed"),
            "{name}: {e}"
        );
        assert_eq!(
            skill_status(a.db(), p1.id).await,
            SkillStatus::Proposed,
            "{name}"
        );
        assert!(in_force(a.db()).await.is_empty(), "{name}");
        // The right hash (12 characters of it): in force.
        let (s, r) = a
            .post(&approve(p1.id), &a.admin, json!({"hash": &p1.hash[..12]}))
            .await;
        assert_eq!(s, StatusCode::OK, "{name}: {r}");
        assert_eq!(r["status"], "active", "{name}");
        assert_eq!(r["approved_by"], "discord:111", "{name}");
        assert_eq!(in_force(a.db()).await, vec![p1.id], "{name}");
        let (s, e) = a
            .post(&approve(p1.id), &a.admin, json!({"hash": p1.hash}))
            .await;
        assert_eq!(
            s,
            StatusCode::CONFLICT,
            "{name}: not proposed any more: {e}"
        );
        let audited = a
            .db()
            .audit()
            .about("default", "skill.approve", "skill:default/daily-report")
            .await
            .unwrap();
        assert_eq!(audited.len(), 1, "{name}");
        assert_eq!(audited[0].actor, "discord:111", "{name}");
        // rev 2 in force; rev 3 proposed against it.
        let p2 = propose_skill(
            a.db(),
            "daily-report",
            "- Leave refunds out\n- By region",
            at,
        )
        .await;
        let (s, _) = a
            .post(&approve(p2.id), &a.admin, json!({"hash": p2.hash}))
            .await;
        assert_eq!(s, StatusCode::OK, "{name}");
        let p3 = propose_skill(a.db(), "daily-report", "- By region", at).await;
        // Rollback (named by any revision of the skill): back to rev 1.
        let rollback = |id: i64| format!("/api/v1/skills/{id}/rollback");
        let (s, r) = a
            .post(&rollback(p3.id), &a.admin, json!({"to": null}))
            .await;
        assert_eq!(
            (s, r["id"].as_i64()),
            (StatusCode::OK, Some(p1.id)),
            "{name}: {r}"
        );
        assert_eq!(in_force(a.db()).await, vec![p1.id], "{name}");
        assert_eq!(
            skill_status(a.db(), p2.id).await,
            SkillStatus::Retired,
            "{name}"
        );
        // rev 3 was proposed against rev 2, no longer in force: stale.
        let (s, e) = a
            .post(&approve(p3.id), &a.admin, json!({"hash": p3.hash}))
            .await;
        assert_eq!(s, StatusCode::CONFLICT, "{name}: {e}");
        assert!(
            e["error"].as_str().unwrap().contains("another revision"),
            "{name}: {e}"
        );
        assert_eq!(in_force(a.db()).await, vec![p1.id], "{name}");
        // Rollback to a named revision; never to one not approved.
        let (s, r) = a
            .post(&rollback(p1.id), &a.admin, json!({"to": p2.id}))
            .await;
        assert_eq!(
            (s, r["id"].as_i64()),
            (StatusCode::OK, Some(p2.id)),
            "{name}: {r}"
        );
        assert_eq!(in_force(a.db()).await, vec![p2.id], "{name}");
        let (s, e) = a
            .post(&rollback(p1.id), &a.admin, json!({"to": p3.id}))
            .await;
        assert_eq!(s, StatusCode::CONFLICT, "{name}: {e}");
        // Reject: once.
        let (s, r) = a
            .post(
                &format!("/api/v1/skills/{}/reject", p3.id),
                &a.admin,
                json!({}),
            )
            .await;
        assert_eq!(
            (s, r["status"].as_str()),
            (StatusCode::OK, Some("rejected")),
            "{name}: {r}"
        );
        let (s, _) = a
            .post(
                &format!("/api/v1/skills/{}/reject", p3.id),
                &a.admin,
                json!({}),
            )
            .await;
        assert_eq!(s, StatusCode::CONFLICT, "{name}");
        // Unknown ids: 404; a malformed body: 400.
        for (method, path, body) in [
            ("GET", "/api/v1/skills/999999".to_string(), None),
            ("POST", approve(999999), Some(json!({"hash": "00000000"}))),
            (
                "POST",
                "/api/v1/skills/999999/reject".to_string(),
                Some(json!({})),
            ),
            ("POST", rollback(999999), Some(json!({}))),
            ("POST", rollback(p1.id), Some(json!({"to": 999999}))),
        ] {
            let (s, e) = a.call(method, &path, Some(&a.admin), body).await;
            assert_eq!(s, StatusCode::NOT_FOUND, "{name}: {method} {path}: {e}");
            assert!(e["error"].is_string(), "{name}: {e}");
        }
        let (s, e) = a.post(&approve(p1.id), &a.admin, json!({"hash": 5})).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{name}: {e}");
        // Pages follow `next`.
        let (_, page) = a.get("/api/v1/skills?limit=2", &a.admin).await;
        assert_eq!(ids(&page), vec![p3.id, p2.id], "{name}");
        assert_eq!(
            a.every_page("/api/v1/skills?limit=1").await,
            vec![p3.id, p2.id, p1.id],
            "{name}"
        );
    }
}

// ------------------------------------------------------------ runs

/// An admin runs an approved skill now: 201 with the finished run (principal
/// `sop-system`, trigger `on_demand`, started by that admin, answered, its
/// lines); it is listed and shown under /api/v1/runs; a user's key is 403 on
/// every runs route and starts nothing; an unknown skill and a bad delivery
/// target start nothing either; another organisation's admin sees no run of this one.
#[tokio::test]
async fn admins_run_a_skill_now_and_see_the_run_and_its_lines() {
    for (name, db) in both_dbs().await {
        let a = api_on(db, Config::default()).await;
        let at = a.h.tick().timestamp_millis();
        let p = propose_skill(a.db(), "daily-report", "- Leave refunds out", at).await;
        let (s, e) = a
            .post(
                &format!("/api/v1/skills/{}/approve", p.id),
                &a.admin,
                json!({"hash": p.hash}),
            )
            .await;
        assert_eq!(s, StatusCode::OK, "{name}: {e}");
        let runs = |db: Db| async move { db.runs().list("default", None, 100).await.unwrap() };
        // A user's key: 403 on all three routes, and no run starts.
        for (method, path, body) in [
            ("POST", "/api/v1/skills/daily-report/run", Some(json!({}))),
            ("POST", "/api/v1/skills/daily-report/run", None),
            ("GET", "/api/v1/runs", None),
            ("GET", "/api/v1/runs/1", None),
        ] {
            let (s, e) = a.call(method, path, Some(&a.bob), body).await;
            assert_eq!(s, StatusCode::FORBIDDEN, "{name}: {method} {path}: {e}");
            assert!(e["error"].as_str().unwrap().contains("admin"), "{e}");
        }
        assert!(runs(a.db().clone()).await.is_empty(), "{name}");
        // An unknown skill, one of another agent, a bad or unconfigured target: nothing runs.
        let (s, e) = a
            .post("/api/v1/skills/no-such-skill/run", &a.admin, json!({}))
            .await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{name}: {e}");
        assert!(
            e["error"].as_str().unwrap().contains("no-such-skill"),
            "{name}: {e}"
        );
        let (s, e) = a
            .post(
                "/api/v1/skills/daily-report/run",
                &a.admin,
                json!({"agent": "ops"}),
            )
            .await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{name}: {e}");
        for body in [
            json!({"deliver": "carrier-pigeon"}),
            json!({"deliver": "discord:123"}),
            json!({"deliver": "teams:ops"}),
            json!({"agent": "no spaces"}),
            json!({"unknown": 1}),
        ] {
            let (s, e) = a
                .post("/api/v1/skills/daily-report/run", &a.admin, body.clone())
                .await;
            assert_eq!(s, StatusCode::BAD_REQUEST, "{name}: {body}: {e}");
        }
        assert!(runs(a.db().clone()).await.is_empty(), "{name}");
        // Run it (the body may be left out): 201 with the finished run.
        let (s, run) = a
            .call(
                "POST",
                "/api/v1/skills/daily-report/run",
                Some(&a.admin),
                None,
            )
            .await;
        assert_eq!(s, StatusCode::CREATED, "{name}: {run}");
        let id = run["id"].as_i64().unwrap();
        for (field, want) in [
            ("name", "daily-report"),
            ("principal", "sop-system"),
            ("trigger", "on_demand"),
            ("started_by", "discord:111"),
            ("outcome", "answered"),
            ("skill", "daily-report"),
            ("deliver", "dashboard"),
            ("error", ""),
        ] {
            assert_eq!(run[field], want, "{name}: {field}: {run}");
        }
        assert_eq!(run["skill_rev"], 1, "{name}: {run}");
        assert_eq!(run["conversation"], format!("run:daily-report/{id}"));
        assert!(is_iso(&run["started_at"]) && is_iso(&run["finished_at"]));
        let lines = run["lines"].as_array().unwrap();
        assert_eq!(lines.len(), 2, "{name}: {run}");
        assert_eq!(lines[0]["author"], "system", "{name}: {run}");
        assert_eq!(lines[0]["sender"], "sop-system", "{name}: {run}");
        assert!(
            lines[0]["text"].as_str().unwrap().contains("daily-report"),
            "{name}: {run}"
        );
        assert_eq!(lines[1]["author"], "agent", "{name}: {run}");
        let answer = lines[1]["text"].as_str().unwrap();
        assert!(!answer.trim().is_empty(), "{name}: {run}");
        // Listed, newest first, without lines; shown with them.
        let (s, page) = a.get("/api/v1/runs", &a.admin).await;
        assert_eq!(
            (s, ids(&page)),
            (StatusCode::OK, vec![id]),
            "{name}: {page}"
        );
        let listed = &page["items"][0];
        assert_eq!(listed["principal"], "sop-system", "{name}");
        assert_eq!(listed["trigger"], "on_demand", "{name}");
        assert_eq!(listed["started_by"], "discord:111", "{name}");
        assert_eq!(listed["outcome"], "answered", "{name}");
        assert!(listed.get("lines").is_none(), "{name}: {listed}");
        let (_, page) = a.get("/api/v1/runs?name=daily-report", &a.admin).await;
        assert_eq!(ids(&page), vec![id], "{name}");
        let (_, page) = a.get("/api/v1/runs?name=weekly", &a.admin).await;
        assert!(ids(&page).is_empty(), "{name}: {page}");
        for bad in ["limit=0", "limit=501", "cursor=x", "bogus=1"] {
            let (s, e) = a.get(&format!("/api/v1/runs?{bad}"), &a.admin).await;
            assert_eq!(s, StatusCode::BAD_REQUEST, "{name}: {bad}: {e}");
        }
        let (s, shown) = a.get(&format!("/api/v1/runs/{id}"), &a.admin).await;
        assert_eq!(s, StatusCode::OK, "{name}: {shown}");
        assert_eq!(shown["started_by"], "discord:111", "{name}");
        assert!(
            shown["lines"]
                .as_array()
                .unwrap()
                .iter()
                .any(|l| l["author"] == "agent" && l["text"] == answer),
            "{name}: {shown}"
        );
        // A second run: pages follow `next`.
        let (s, second) = a
            .post(
                "/api/v1/skills/daily-report/run",
                &a.admin,
                json!({"deliver": "none"}),
            )
            .await;
        assert_eq!(s, StatusCode::CREATED, "{name}: {second}");
        assert_eq!(second["deliver"], "none", "{name}");
        let second = second["id"].as_i64().unwrap();
        assert_eq!(
            a.every_page("/api/v1/runs?limit=1").await,
            vec![second, id],
            "{name}"
        );
        // Audited as the admin who started it.
        let audited = a
            .db()
            .audit()
            .about("default", "run.start", &format!("run:daily-report/{id}"))
            .await
            .unwrap();
        assert_eq!(audited.len(), 1, "{name}");
        assert_eq!(audited[0].actor, "discord:111", "{name}");
        // Unknown: 404.
        let (s, e) = a.get("/api/v1/runs/999999", &a.admin).await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{name}: {e}");
        // Another organisation's admin: 404 for this run, an empty list, and
        // this organisation's skill is not theirs to run.
        a.h.services
            .pairing()
            .add_user("other", "discord:999", "Olga", Role::Admin, "test", at)
            .await
            .unwrap();
        let olga =
            a.h.services
                .pairing()
                .create_api_key("other", "discord:999", "test", at)
                .await
                .unwrap()
                .key;
        let (s, e) = a.get(&format!("/api/v1/runs/{id}"), &olga).await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{name}: {e}");
        let (s, page) = a.get("/api/v1/runs", &olga).await;
        assert_eq!(s, StatusCode::OK, "{name}: {page}");
        assert!(ids(&page).is_empty(), "{name}: {page}");
        let (s, e) = a
            .post("/api/v1/skills/daily-report/run", &olga, json!({}))
            .await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{name}: {e}");
        assert!(a
            .db()
            .runs()
            .list("other", None, 10)
            .await
            .unwrap()
            .is_empty());
    }
}

/// SKILL.md out of one store and into another: the same slugs and hashes;
/// `allowed-tools` dropped with a warning; a bad file refuses the lot.
#[tokio::test]
async fn skills_export_and_import_as_skill_md() {
    use steward::skills::skill_md::{self, ImportTo, Imported};
    for (name, db) in both_dbs().await {
        let a = api_on(db, Config::default()).await;
        let at = a.h.tick().timestamp_millis();
        let admin = memory::Principal::Human {
            user_id: "operator (cli)".into(),
            name: "operator".into(),
            role: Role::Admin,
        };
        for (slug, body) in [
            (
                "daily-report",
                "When asked for the daily report:\n\n- Leave refunds out",
            ),
            ("weekly-digest", "- Mention the owner\n  - by name"),
        ] {
            let p = propose_skill(a.db(), slug, body, at).await;
            let r =
                a.h.services
                    .skills()
                    .approve("default", &admin, p.id, &p.hash, at)
                    .await;
            assert!(r.unwrap().is_ok(), "{name}");
        }
        let active = a.db().skills().active("default", "default").await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let written = skill_md::write_all(dir.path(), &active).unwrap();
        assert_eq!(written.len(), 2, "{name}");
        assert!(dir.path().join("daily-report/SKILL.md").is_file(), "{name}");
        let files = skill_md::load(dir.path()).unwrap();
        // Into a fresh store, approved: the same content, the same hashes.
        let other = Harness::new().await;
        let to = ImportTo {
            org: "default",
            agent: "default",
            proposed_by: "import (cli)",
            approve_as: Some(&admin),
            now: at,
        };
        let done = skill_md::import(other.db(), other.services.skills(), &to, &files)
            .await
            .unwrap();
        assert!(
            done.iter().all(|d| matches!(d, Imported::Approved(_))),
            "{name}: {done:?}"
        );
        let there = other
            .db()
            .skills()
            .active("default", "default")
            .await
            .unwrap();
        let key = |v: &[memory::skill::SkillRevision]| {
            v.iter()
                .map(|r| {
                    (
                        r.slug.clone(),
                        r.description.clone(),
                        r.body.clone(),
                        r.hash.clone(),
                    )
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(key(&there), key(&active), "{name}");
        assert_eq!(there[0].proposed_by, "import (cli)", "{name}");
        let approvals = other
            .db()
            .audit()
            .about("default", "skill.approve", "skill:default/daily-report")
            .await
            .unwrap();
        assert_eq!(approvals[0].actor, "operator (cli)", "{name}");
        // Into the store it came from: unchanged, nothing proposed.
        let before = a.db().skills().list("default", None).await.unwrap().len();
        let again = skill_md::import(a.db(), a.h.services.skills(), &to, &files)
            .await
            .unwrap();
        assert!(
            again.iter().all(|d| matches!(d, Imported::Unchanged(_))),
            "{name}"
        );
        assert_eq!(
            a.db().skills().list("default", None).await.unwrap().len(),
            before
        );
        // `allowed-tools`: kept without it, with a warning; proposed, not approved.
        let tools = dir.path().join("deploy-check");
        std::fs::create_dir(&tools).unwrap();
        std::fs::write(
            tools.join("SKILL.md"),
            "---\nname: deploy-check\ndescription: Check a deploy.\nallowed-tools: Bash(*)\n---\n- Look at the dashboard\n",
        )
        .unwrap();
        let files = skill_md::load(&tools.join("SKILL.md")).unwrap();
        assert!(files[0].warnings[0].contains("allowed-tools"), "{name}");
        let proposing = ImportTo {
            approve_as: None,
            ..to
        };
        let done = skill_md::import(a.db(), a.h.services.skills(), &proposing, &files)
            .await
            .unwrap();
        let Imported::Proposed(p) = &done[0] else {
            panic!("{name}: {done:?}")
        };
        assert_eq!(p.status, memory::skill::SkillStatus::Proposed, "{name}");
        assert!(
            !p.body.contains("Bash") && !p.description.contains("Bash"),
            "{name}"
        );
        // A bad name or a credential anywhere: every bad file named, nothing loaded.
        let before = a.db().skills().list("default", None).await.unwrap().len();
        for (dir_name, text) in [
            (
                "Bad_Name",
                "---\nname: Bad_Name\ndescription: d\n---\n- x\n",
            ),
            (
                "leaky",
                "---\nname: leaky\ndescription: d\n---\n- Log in with password: hunter22\n",
            ),
        ] {
            let d = dir.path().join(dir_name);
            std::fs::create_dir(&d).unwrap();
            std::fs::write(d.join("SKILL.md"), text).unwrap();
        }
        let errors = skill_md::load(dir.path()).unwrap_err();
        let said: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        assert_eq!(said.len(), 2, "{name}: {said:?}");
        assert!(said[0].contains("Bad_Name/SKILL.md"), "{name}: {said:?}");
        assert!(
            said[1].contains("leaky/SKILL.md") && said[1].contains("credential"),
            "{name}: {said:?}"
        );
        assert!(!said[1].contains("hunter22"), "{name}");
        assert_eq!(
            a.db().skills().list("default", None).await.unwrap().len(),
            before,
            "{name}"
        );
    }
}

#[tokio::test]
async fn bodies_over_the_limit_are_413_and_malformed_ones_400() {
    let a = api().await;
    let big = json!({"text": "x".repeat(70 * 1024)});
    let (s, e) = a.post("/api/v1/policy", &a.admin, big.clone()).await;
    assert_eq!(s, StatusCode::PAYLOAD_TOO_LARGE, "{e}");
    assert!(
        e["error"]
            .as_str()
            .unwrap()
            .contains("server.max_body_bytes"),
        "{e}"
    );
    let (s, e) = a.post("/api/v1/messages", &a.bob, big).await;
    assert_eq!(s, StatusCode::PAYLOAD_TOO_LARGE, "{e}");
    // The key is checked before the body is read.
    let (s, _) = a
        .call(
            "POST",
            "/api/v1/policy",
            None,
            Some(json!({"text": "x".repeat(70 * 1024)})),
        )
        .await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
    let req = Request::post("/api/v1/policy")
        .header("authorization", format!("Bearer {}", a.admin))
        .body(Body::from("{not json"))
        .unwrap();
    let resp = a.app.clone().oneshot(req).await.unwrap();
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    let e: Value = serde_json::from_slice(&bytes).unwrap();
    assert!(e["error"].as_str().unwrap().contains("malformed"), "{e}");
}

#[tokio::test]
async fn a_key_over_its_rate_is_429_with_retry_after() {
    let mut cfg = Config::default();
    cfg.rate_limit.api_key_burst = 3;
    cfg.rate_limit.api_per_key_per_minute = 1;
    let a = api_on(Db::in_memory().await.unwrap(), cfg).await;
    for _ in 0..3 {
        let (s, _) = a.get("/api/v1/me", &a.bob).await;
        assert_eq!(s, StatusCode::OK);
    }
    let req = Request::get("/api/v1/me/memory")
        .header("authorization", format!("Bearer {}", a.bob))
        .body(Body::empty())
        .unwrap();
    let resp = a.app.clone().oneshot(req).await.unwrap();
    assert_eq!(resp.status(), StatusCode::TOO_MANY_REQUESTS);
    let wait: u64 = resp.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&wait), "{wait}");
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    let e: Value = serde_json::from_slice(&bytes).unwrap();
    assert!(
        e["error"].as_str().unwrap().contains("too many requests"),
        "{e}"
    );
    // Another key's allowance is its own.
    let (s, _) = a.get("/api/v1/me", &a.carol).await;
    assert_eq!(s, StatusCode::OK);
}

#[tokio::test]
async fn a_real_socket_serves_the_api() {
    let a = api().await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(serve(
        listener,
        AppState::new(a.h.services.clone()),
        std::future::pending(),
    ));
    let client = reqwest::Client::new();
    let doc: Value = client
        .get(format!("http://{addr}/api/v1/openapi.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(doc["paths"]["/api/v1/memory"]["get"].is_object(), "{doc}");
    let resp = client
        .post(format!("http://{addr}/api/v1/users"))
        .bearer_auth(&a.admin)
        .json(&json!({"user_id": "cli:erin", "role": "user"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
    // Erin has no key yet; Carol makes one of her own.
    let resp = client
        .post(format!("http://{addr}/api/v1/me/keys"))
        .bearer_auth(&a.carol)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    let key: Value = resp.json().await.unwrap();
    let me: Value = client
        .get(format!("http://{addr}/api/v1/me"))
        .bearer_auth(key["key"].as_str().unwrap())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(me["user_id"], "discord:333");
    let refused = client
        .get(format!("http://{addr}/api/v1/audit"))
        .bearer_auth(key["key"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 403);
    server.abort();
}
