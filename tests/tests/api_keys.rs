//! The REST API v1 (`steward::api`) in-process with `oneshot`, on both
//! databases: what a key may do — a user's key on every admin operation,
//! `me`, a key acting as its maker, listing and revoking keys, the rate limit.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use memory::{Db, Role, Scope};
use serde_json::{json, Value};
use steward::config::Config;
use steward_tests::api::{api, api_on, concrete, is_iso, operations};
use steward_tests::both_dbs;
use tower::ServiceExt;

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
