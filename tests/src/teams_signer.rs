//! Microsoft Teams at the wire: a signer that signs outgoing-webhook requests
//! the way Teams does, and a fake Teams Workflows webhook that records what is
//! posted to it.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hmac::{Hmac, Mac};
use rand::RngCore;
use serde_json::Value;
use sha2::Sha256;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, Mutex as AsyncMutex};

/// A fresh security token, base64 as Teams shows it (32 random bytes).
pub fn new_token() -> String {
    let mut key = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut key);
    STANDARD.encode(key)
}

/// The `Authorization` header value Teams sends with `body`: `HMAC ` and the
/// base64 HMAC-SHA256 of the raw body, keyed with the base64-decoded token.
pub fn sign(body: &[u8], token: &str) -> String {
    let key = STANDARD.decode(token).expect("token is base64");
    sign_with_key(body, &key)
}

/// Like [`sign`], keyed with raw bytes (to forge signatures with wrong keys).
pub fn sign_with_key(body: &[u8], key: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes any key");
    mac.update(body);
    format!("HMAC {}", STANDARD.encode(mac.finalize().into_bytes()))
}

/// How the fake answers one post before it starts accepting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// 429 with `Retry-After: 0`.
    TooManyRequests,
    /// 500 without `Retry-After`.
    ServerError,
    /// 400: a final refusal.
    BadRequest,
}

struct FakeState {
    refusals: Mutex<VecDeque<Refusal>>,
    statuses: Mutex<Vec<u16>>,
    accepted: mpsc::UnboundedSender<Value>,
}

/// A Teams Workflows webhook on 127.0.0.1: answers the given refusals first,
/// then 202 Accepted (as Workflows does), recording every accepted body.
pub struct FakeWorkflows {
    pub url: String,
    state: Arc<FakeState>,
    received: AsyncMutex<mpsc::UnboundedReceiver<Value>>,
    server: tokio::task::JoinHandle<()>,
}

impl FakeWorkflows {
    pub async fn start(refusals: impl IntoIterator<Item = Refusal>) -> FakeWorkflows {
        let (tx, rx) = mpsc::unbounded_channel();
        let state = Arc::new(FakeState {
            refusals: Mutex::new(refusals.into_iter().collect()),
            statuses: Mutex::new(Vec::new()),
            accepted: tx,
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind fake Workflows");
        let addr = listener.local_addr().expect("local addr");
        let app = Router::new()
            .route("/workflows/trigger", post(receive))
            .with_state(state.clone());
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        FakeWorkflows {
            url: format!("http://{addr}/workflows/trigger"),
            state,
            received: AsyncMutex::new(rx),
            server,
        }
    }

    /// The next accepted post. Waits for it (a guard of 60 s turns a missing
    /// delivery into a failure instead of a hang).
    pub async fn next_post(&self) -> Value {
        let mut rx = self.received.lock().await;
        tokio::time::timeout(Duration::from_secs(60), rx.recv())
            .await
            .expect("no post reached the fake Workflows webhook")
            .expect("fake Workflows stopped")
    }

    /// The status of every post answered so far, in order.
    pub fn statuses(&self) -> Vec<u16> {
        self.state.statuses.lock().expect("statuses").clone()
    }
}

impl Drop for FakeWorkflows {
    fn drop(&mut self) {
        self.server.abort();
    }
}

async fn receive(State(state): State<Arc<FakeState>>, Json(body): Json<Value>) -> Response {
    let refusal = state.refusals.lock().expect("refusals").pop_front();
    let resp = match refusal {
        Some(Refusal::TooManyRequests) => (
            StatusCode::TOO_MANY_REQUESTS,
            [("retry-after", "0")],
            "slow down",
        )
            .into_response(),
        Some(Refusal::ServerError) => {
            (StatusCode::INTERNAL_SERVER_ERROR, "flow failed").into_response()
        }
        Some(Refusal::BadRequest) => (StatusCode::BAD_REQUEST, "bad card").into_response(),
        None => StatusCode::ACCEPTED.into_response(),
    };
    // Recorded before the post is handed to a waiting test.
    state
        .statuses
        .lock()
        .expect("statuses")
        .push(resp.status().as_u16());
    if resp.status() == StatusCode::ACCEPTED {
        let _ = state.accepted.send(body);
    }
    resp
}

/// The text of every TextBlock in a Workflows Adaptive Card message, joined.
pub fn card_text(post: &Value) -> String {
    post["attachments"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|a| a["contentType"] == "application/vnd.microsoft.card.adaptive")
        .flat_map(|a| a["content"]["body"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "TextBlock")
        .filter_map(|b| b["text"].as_str().map(String::from))
        .collect::<Vec<_>>()
        .join("\n")
}
