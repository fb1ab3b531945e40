//! The REST API v1 (`steward::api`) in-process with `oneshot`, on both
//! databases: pairing — admins approve, deny and add people, set their
//! roles, revoke them and link identities.

use axum::http::StatusCode;
use memory::Role;
use serde_json::json;
use steward::config::Config;
use steward_tests::api::{api_on, is_iso};
use steward_tests::both_dbs;

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
