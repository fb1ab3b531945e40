//! The HTTP server: health, and the `/api/v1` surface, with the dashboard's
//! and the Teams webhook's routes (each carrying its own state) merged in.
//! `app(state)` is the whole router, so tests drive it in-process and over a
//! real socket alike.

use crate::turn::TurnLoop;
use adapters::{ConversationKind, Inbound};
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::json;
use std::sync::Arc;

#[derive(Clone)]
pub struct AppState {
    pub turns: Arc<TurnLoop>,
}

pub fn app(state: AppState) -> Router {
    let limit = state.turns.config().server.max_body_bytes;
    Router::new()
        .route("/healthz", get(healthz))
        .route("/api/v1/messages", post(post_message))
        .merge(crate::dashboard::router(&state.turns))
        .merge(crate::teams::routes(&state.turns))
        .layer(DefaultBodyLimit::max(limit))
        .with_state(state)
}

async fn healthz(State(state): State<AppState>) -> Response {
    match state.turns.db().ping().await {
        Ok(_) => Json(json!({"status": "ok"})).into_response(),
        Err(e) => error(
            StatusCode::SERVICE_UNAVAILABLE,
            &format!("database unavailable: {e}"),
        ),
    }
}

fn error(status: StatusCode, reason: &str) -> Response {
    (status, Json(json!({"error": reason}))).into_response()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MessageRequest {
    text: String,
    conversation: Option<String>,
    #[serde(default = "direct")]
    kind: ConversationKind,
    agent: Option<String>,
    /// Client message id: a retry with the same id runs once.
    id: Option<String>,
}

fn direct() -> ConversationKind {
    ConversationKind::Direct
}

/// The conversation an API message belongs to: the key's user's own, named
/// `api:<user>` or `api:<user>/<given>`. A client names a thread of its
/// user's, never another channel's or another user's (`dashboard:admin`, a
/// Discord channel), so it cannot write into or read from it.
fn api_conversation(user_id: &str, given: Option<&str>) -> String {
    match given {
        Some(thread) => format!("api:{user_id}/{thread}"),
        None => format!("api:{user_id}"),
    }
}

/// `POST /api/v1/messages`: run a message as the API key's paired user.
async fn post_message(State(state): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    let key = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    let Some(key) = key else {
        return error(
            StatusCode::UNAUTHORIZED,
            "missing API key (Authorization: Bearer <key>)",
        );
    };
    let user = match state.turns.pairing().api_key_user(key).await {
        Ok(Some(u)) => u,
        Ok(None) => return error(StatusCode::UNAUTHORIZED, "unknown API key"),
        Err(e) => {
            tracing::error!(error = %e, "API key lookup failed");
            return error(
                StatusCode::SERVICE_UNAVAILABLE,
                "identity store unavailable",
            );
        }
    };
    let req: MessageRequest = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                &format!("malformed request body: {e}"),
            )
        }
    };
    if req.text.trim().is_empty() {
        return error(StatusCode::BAD_REQUEST, "text must not be empty");
    }
    if let Some(Err(why)) = req.agent.as_deref().map(memory::check_agent_id) {
        return error(StatusCode::BAD_REQUEST, &format!("agent: {why}"));
    }
    let msg = Inbound {
        org: user.org.clone(),
        agent: req
            .agent
            .unwrap_or_else(|| state.turns.config().server.agent.clone()),
        channel: "api".into(),
        conversation: api_conversation(&user.user_id, req.conversation.as_deref()),
        kind: req.kind,
        sender: Some(user.user_id.clone()),
        sender_name: user.name.clone(),
        text: req.text,
        platform_id: req.id,
        at: chrono::Utc::now(),
        mentioned: true,
        answer: None,
    };
    match state.turns.handle(&msg).await {
        Ok(replies) => Json(json!({ "replies": replies })).into_response(),
        Err(e) => {
            tracing::error!(error = %e, "turn failed");
            error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the turn failed; the message was not lost if it was stored",
            )
        }
    }
}
