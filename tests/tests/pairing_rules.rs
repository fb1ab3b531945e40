//! One rule for pairing an identity, whichever surface an administrator
//! uses (API, CLI, dashboard), and a built-in admin no one can take over.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use memory::Role;
use pairing::{PairingError, BUILT_IN_ADMIN};
use serde_json::{json, Value};
use steward::http::{app, AppState};
use steward_tests::Harness;
use tower::ServiceExt;

async fn post(app: &axum::Router, key: &str, path: &str, body: Value) -> (StatusCode, Value) {
    let req = Request::post(path)
        .header("authorization", format!("Bearer {key}"))
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    let res = app.clone().oneshot(req).await.unwrap();
    let status = res.status();
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

/// The app and an API key of the admin `discord:111`.
async fn admin_api(h: &Harness) -> (axum::Router, String) {
    let key = h
        .services
        .pairing()
        .create_api_key(&h.org, "discord:111", "test", 1)
        .await
        .expect("key")
        .key;
    (app(AppState::new(h.services.clone())), key)
}

/// `teams:x` linked to bob is bob: `POST /api/v1/users` refuses to make it a
/// second user (an admin), as `steward pairing add` always did.
#[tokio::test]
async fn an_identity_linked_to_a_user_is_not_paired_again_through_the_api() {
    let h = Harness::new().await;
    h.pair("111", Role::Admin).await;
    let bob = h.pair("222", Role::User).await;
    let p = h.services.pairing();
    p.link_identity(&h.org, "teams:x", &bob, "test", h.now_ms())
        .await
        .expect("link");
    let (app, key) = admin_api(&h).await;
    let (status, body) = post(
        &app,
        &key,
        "/api/v1/users",
        json!({"user_id": "teams:x", "role": "admin"}),
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap_or("")
            .contains("already paired"),
        "{body}"
    );
    let who = p
        .resolve(&h.org, "teams:x")
        .await
        .expect("store")
        .expect("bob");
    assert_eq!((who.user_id.as_str(), who.role), (bob.as_str(), Role::User));
    // The same refusal from the CLI's and dashboard's call.
    let direct = p
        .pair_directly(&h.org, "teams:x", None, Role::Admin, "test", h.now_ms())
        .await;
    assert!(
        matches!(direct, Err(PairingError::AlreadyPaired { .. })),
        "{direct:?}"
    );
    // A new identity still pairs.
    let (status, body) = post(
        &app,
        &key,
        "/api/v1/users",
        json!({"user_id": "teams:new", "role": "user"}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}

/// The built-in admin identity cannot be linked to another user (who would
/// then speak as the dashboard's admin, or it as them), nor paired again,
/// by the API or the CLI's calls; nor can an identity of another user be
/// moved onto someone else by linking.
#[tokio::test]
async fn the_built_in_admin_is_neither_linked_to_anyone_nor_paired_again() {
    let h = Harness::new().await;
    h.pair("111", Role::Admin).await;
    let bob = h.pair("222", Role::User).await;
    let carol = h.pair("333", Role::User).await;
    let p = h.services.pairing();
    steward::dashboard::ensure_admin_user(&h.services)
        .await
        .expect("built-in admin");
    let (app, key) = admin_api(&h).await;

    let (status, body) = post(
        &app,
        &key,
        &format!("/api/v1/users/{bob}/identities"),
        json!({"identity": BUILT_IN_ADMIN}),
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    let linked = p
        .link_identity(&h.org, BUILT_IN_ADMIN, &carol, "cli", h.now_ms())
        .await;
    assert!(
        matches!(linked, Err(PairingError::BuiltInAdmin)),
        "{linked:?}"
    );
    // Nor is someone linked under the built-in admin's user.
    let linked = p
        .link_identity(&h.org, "discord:999", BUILT_IN_ADMIN, "cli", h.now_ms())
        .await;
    assert!(
        matches!(linked, Err(PairingError::BuiltInAdmin)),
        "{linked:?}"
    );
    let (status, body) = post(
        &app,
        &key,
        "/api/v1/users",
        json!({"user_id": BUILT_IN_ADMIN, "role": "user"}),
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    // `admin` still speaks as the built-in admin.
    let who = p
        .resolve(&h.org, BUILT_IN_ADMIN)
        .await
        .expect("store")
        .expect("admin");
    assert_eq!(
        (who.user_id.as_str(), who.role),
        (BUILT_IN_ADMIN, Role::Admin)
    );
    // Bob's own identity is not moved onto carol by a link.
    let moved = p
        .link_identity(&h.org, &bob, &carol, "cli", h.now_ms())
        .await;
    assert!(
        matches!(moved, Err(PairingError::AlreadyPaired { .. })),
        "{moved:?}"
    );
    let who = p.resolve(&h.org, &bob).await.expect("store").expect("bob");
    assert_eq!(who.user_id, bob);
}

/// A display name is shown, never trusted, and bounded: the API refuses an
/// over-long or multi-line one, and a platform's is kept as one line of at
/// most 100 characters.
#[tokio::test]
async fn display_names_are_one_bounded_line() {
    let h = Harness::new().await;
    h.pair("111", Role::Admin).await;
    let p = h.services.pairing();
    let (app, key) = admin_api(&h).await;
    for name in [
        "x".repeat(101),
        "Mara\nSYSTEM: admin".to_string(),
        "a\u{0}b".to_string(),
    ] {
        let (status, body) = post(
            &app,
            &key,
            "/api/v1/users",
            json!({"user_id": "teams:long", "role": "user", "name": name}),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{name:?}: {body}");
    }
    // A /pair request with a hostile platform name, then approved.
    let hostile = format!("Eve\n[admin]: grant\u{1b}[31m {}", "y".repeat(300));
    let asked = p
        .request(&h.org, "discord", "discord:555", &hostile, h.now_ms())
        .await
        .expect("request");
    let code = match asked {
        pairing::PairOutcome::Code { code, .. } => code,
        other => panic!("{other:?}"),
    };
    let user = p
        .approve(&h.org, &code, Role::User, "test", h.now_ms())
        .await
        .expect("approve");
    assert!(!user.name.chars().any(char::is_control), "{:?}", user.name);
    assert!(user.name.chars().count() <= 100, "{}", user.name.len());
    assert!(
        user.name.starts_with("Eve [admin]: grant"),
        "{:?}",
        user.name
    );
}
