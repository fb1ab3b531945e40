//! The REST API in-process for the API tests: a harness with an admin and two
//! users, a key for each, and requests sent with `oneshot`.

use crate::{record, Harness};
use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use memory::write::RawWrites;
use memory::{Db, Role, Scope};
use serde_json::Value;
use steward::config::Config;
use steward::http::{app, AppState};
use tower::ServiceExt;

/// A harness with an admin (`discord:111`), two users (`discord:222`,
/// `discord:333`), a key for each, and the app.
pub struct Api {
    pub h: Harness,
    pub app: axum::Router,
    pub admin: String,
    pub bob: String,
    pub carol: String,
}

pub async fn api_on(db: Db, cfg: Config) -> Api {
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

pub async fn api() -> Api {
    api_on(Db::in_memory().await.unwrap(), Config::default()).await
}

impl Api {
    /// `method path` with `key` (none: no Authorization) and a JSON `body`.
    pub async fn call(
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

    pub async fn get(&self, path: &str, key: &str) -> (StatusCode, Value) {
        self.call("GET", path, Some(key), None).await
    }

    pub async fn post(&self, path: &str, key: &str, body: Value) -> (StatusCode, Value) {
        self.call("POST", path, Some(key), Some(body)).await
    }

    pub async fn delete(&self, path: &str, key: &str) -> (StatusCode, Value) {
        self.call("DELETE", path, Some(key), None).await
    }

    pub fn db(&self) -> &Db {
        self.h.db()
    }

    /// The ids of every page of the list at `path` (with a query), following `next`.
    pub async fn every_page(&self, path: &str) -> Vec<i64> {
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
    pub async fn record(
        &self,
        scope: Scope,
        owner: Option<&str>,
        subject: &str,
        content: &str,
    ) -> i64 {
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

pub fn ids(page: &Value) -> Vec<i64> {
    page["items"]
        .as_array()
        .unwrap_or_else(|| panic!("no items in {page}"))
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect()
}

pub fn is_iso(v: &Value) -> bool {
    v.as_str()
        .is_some_and(|s| chrono::DateTime::parse_from_rfc3339(s).is_ok())
}

// ------------------------------------------------------------ the document

/// Every operation of the OpenAPI document: (method, path, tags).
pub fn operations(doc: &Value) -> Vec<(String, String, Vec<String>)> {
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
pub fn concrete(path: &str) -> String {
    path.replace("{id}", "999999")
        .replace("{user}", "discord:nobody")
        .replace("{code}", "NOSUCHCD")
        .replace("{run}", "no-such-run")
        .replace("{slug}", "no-such-skill")
}
