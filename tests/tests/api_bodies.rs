//! A request body is read as its OpenAPI document says: one JSON object.
//! serde alone would read a struct from an array of its fields in order, so
//! `["agent"]` once created a key; an optional body may be left out or be
//! `null`, as a JSON client writes "no body".

use axum::http::StatusCode;
use memory::Role;
use serde_json::json;
use steward::http::{app, AppState};
use steward_tests::{call_api, Harness};

#[tokio::test]
async fn a_body_is_one_json_object_and_an_optional_one_may_be_null() {
    let h = Harness::new().await;
    let admin = h.pair("111", Role::Admin).await;
    let key = h
        .services
        .pairing()
        .create_api_key("default", &admin, &admin, 1)
        .await
        .expect("key")
        .key;
    let api = app(AppState::new(h.services.clone()));
    let keys = || async {
        h.services
            .pairing()
            .api_keys("default", None)
            .await
            .expect("keys")
            .len()
    };
    let keys_before = keys().await;

    // The fields of `NewOwnKey` as an array (`on_behalf_of` null): refused,
    // and no key is made.
    let (status, body) = call_api(&api, "POST", "/api/v1/me/keys", &key, Some(json!([null]))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap_or_default()
            .contains("JSON object"),
        "{body}"
    );
    let (status, body) =
        call_api(&api, "POST", "/api/v1/policy", &key, Some(json!("a rule"))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(keys().await, keys_before);

    // The same fields as an object are the request the document describes.
    let (status, body) = call_api(&api, "POST", "/api/v1/me/keys", &key, Some(json!({}))).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");

    // An optional body given as `null` is a body left out: the run is
    // refused for its skill (none in force), not for its body.
    let (status, body) = call_api(
        &api,
        "POST",
        "/api/v1/skills/no-such-skill/run",
        &key,
        Some(json!(null)),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (status, body) = call_api(
        &api,
        "POST",
        "/api/v1/skills/no-such-skill/run",
        &key,
        Some(json!([])),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
}
