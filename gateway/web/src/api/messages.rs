//! `POST /api/v1/messages`: a message through the turn loop as the key's
//! paired user, in a conversation of their own.

use super::auth::Caller;
use super::wire::{self, Body, Reply};
use crate::error::{ApiError, ErrorBody};
use adapters::{ConversationKind, Inbound};
use axum::http::StatusCode;
use axum::Json;
use serde::{Deserialize, Serialize};
use steward_core::turn::{Outcome, Refused};
use utoipa::ToSchema;

/// A message to the agent.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MessageRequest {
    /// Not only white space.
    #[schema(pattern = "\\S")]
    pub text: String,
    /// A thread of yours (`api:<you>/<conversation>`); your own one when not given.
    pub conversation: Option<String>,
    #[serde(default = "direct")]
    #[schema(value_type = Option<ConversationKindSchema>)]
    pub kind: ConversationKind,
    /// The agent to ask (default: server.agent).
    #[schema(pattern = "^[A-Za-z0-9._-]{1,64}$")]
    pub agent: Option<String>,
    /// Client message id: a retry with the same id runs once and is answered
    /// with the same reply (or, if its turn never finished, with the turn's).
    pub id: Option<String>,
}

/// A direct conversation, or a shared thread.
#[derive(ToSchema)]
#[schema(rename_all = "lowercase")]
#[allow(dead_code)]
pub enum ConversationKindSchema {
    Direct,
    Group,
}

fn direct() -> ConversationKind {
    ConversationKind::Direct
}

/// One reply.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReplyOut {
    pub conversation: String,
    pub text: String,
    /// Set when the reply asks "Remember this?": the batch a yes or no answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proposal: Option<i64>,
}

/// The agent's replies.
#[derive(Debug, Serialize, ToSchema)]
pub struct Replies {
    pub replies: Vec<ReplyOut>,
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

/// Run a message as the API key's paired user. The key is checked before the
/// body is read, so a client without one gets its 401 at once, whatever
/// length it declares.
#[utoipa::path(post, operation_id = "messages_post_message", path = "/api/v1/messages", tag = "messages", request_body = MessageRequest,
    responses((status = 200, body = Replies), (status = 403, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 413, body = ErrorBody), (status = 429, body = ErrorBody)))]
pub async fn post_message(caller: Caller, Body(req): Body<MessageRequest>) -> Reply<Replies> {
    if req.text.trim().is_empty() {
        return Err(ApiError::bad_request("text must not be empty"));
    }
    if let Some(Err(why)) = req.agent.as_deref().map(memory::check_agent_id) {
        return Err(ApiError::bad_request(format!("agent: {why}")));
    }
    let (user, on_behalf_of) = (&caller.user, caller.on_behalf_of.clone());
    if let Some(principal) = &on_behalf_of {
        // Every delegated message is on the audit log: who acted, for whom.
        let detail = memory::admin_text!(
            "conversation {}",
            memory::admin_text::Identifier::new(req.conversation.as_deref().unwrap_or(""))
        );
        caller
            .db
            .audit()
            .append(
                &user.org,
                &user.user_id,
                "delegate.message",
                principal,
                &detail,
                caller.now,
            )
            .await?;
    }
    let msg = Inbound {
        org: user.org.clone(),
        agent: req.agent.unwrap_or_else(|| caller.cfg.server.agent.clone()),
        channel: "api".into(),
        conversation: api_conversation(&user.user_id, req.conversation.as_deref()),
        kind: req.kind,
        sender: Some(user.user_id.clone()),
        sender_name: user.name.clone(),
        text: req.text,
        platform_id: req.id,
        // The request's one reading of the clock, as its audit line has it.
        at: wire::at(caller.now),
        mentioned: true,
        answer: None,
        on_behalf_of,
    };
    let outcome = caller.turns.take(&msg).await.map_err(|e| {
        tracing::error!(error = %e, "turn failed");
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the turn failed; the message was not lost if it was stored: send it again with its id for its answer",
        )
    })?;
    let replies = match outcome {
        // A group line that did not mention the agent (never an API message,
        // which always does): stored, with nothing to say.
        Outcome::Answered(replies) | Outcome::Again(replies) => replies,
        Outcome::Stored => Vec::new(),
        Outcome::Refused { why, .. } => return Err(refusal(why)),
    };
    Ok(Json(Replies {
        replies: replies
            .into_iter()
            .map(|r| ReplyOut {
                conversation: r.conversation,
                text: r.text,
                proposal: r.proposal,
            })
            .collect(),
    }))
}

/// The status of a message the turn loop did not store: nothing was stored
/// and its id was not spent, so it may be sent again.
fn refusal(why: Refused) -> ApiError {
    match why {
        Refused::RateLimited { retry_after } => ApiError::rate_limited(
            retry_after,
            format!(
                "too many messages; nothing was stored, send it again in {retry_after} s \
                 (rate_limit.per_sender_per_minute, rate_limit.per_conversation_per_minute)"
            ),
        ),
        Refused::TooLong { max } => ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "text is longer than {max} characters (turn.max_message_chars); nothing was stored"
            ),
        ),
        Refused::NotPaired => {
            ApiError::forbidden("this key's user is not paired; nothing was stored")
        }
        Refused::IdentityUnavailable => ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "the pairing store did not answer; nothing was stored, try again shortly",
        ),
        Refused::InProgress => ApiError {
            retry_after: Some(1),
            ..ApiError::conflict(
                "a message with this id is being answered; send it again shortly for its answer",
            )
        },
    }
}
