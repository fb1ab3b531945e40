//! The REST API v1 (`steward::api`) as a client meets it: the OpenAPI
//! document against the router (one schema a name, every served route),
//! bodies over the limit or malformed, and a real socket.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use steward::http::{serve, AppState};
use steward_tests::api::{api, concrete, operations};
use tower::ServiceExt;

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
