//! The web layer's one error: a status and `{"error": "..."}`, from every
//! failure the services report (store, pairing, turn, export). The REST API
//! answers with it, and so do bodies read under a deadline (`body`) and the
//! server's own refusals (`http`).

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;

/// Every error answer of `/api/v1`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    /// What went wrong, for a person to read.
    #[schema(example = "unknown API key")]
    pub error: String,
    /// A stable code for refusals a client tells apart (`reason_required`, `not_a_manager`, `stale_hash`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

/// A refused or failed API request.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
    /// Seconds to wait, for a 429.
    pub retry_after: Option<u64>,
    /// The `code` of the answer, when the refusal has one.
    pub code: Option<&'static str>,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            message: message.into(),
            retry_after: None,
            code: None,
        }
    }

    /// The same refusal with a stable `code` in its JSON body.
    pub fn with_code(self, code: &'static str) -> Self {
        ApiError {
            code: Some(code),
            ..self
        }
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::NOT_FOUND, message)
    }

    pub fn conflict(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::CONFLICT, message)
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::FORBIDDEN, message)
    }

    pub fn unauthorized(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::UNAUTHORIZED, message)
    }

    pub fn too_many(retry_after: u64) -> Self {
        ApiError::rate_limited(
            retry_after,
            format!(
                "too many requests for this key; retry in {retry_after} s (rate_limit.api_per_key_per_minute)"
            ),
        )
    }

    /// 429 with `Retry-After: retry_after` (whole seconds).
    pub fn rate_limited(retry_after: u64, message: impl Into<String>) -> Self {
        ApiError {
            retry_after: Some(retry_after),
            ..ApiError::new(StatusCode::TOO_MANY_REQUESTS, message)
        }
    }

    /// The database did not answer: logged, and 503 with nothing changed.
    fn unavailable(e: &dyn std::fmt::Display) -> Self {
        tracing::error!(error = %e, "API request failed in the store");
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "the database did not answer; nothing was changed, try again shortly",
        )
    }
}

/// The JSON error answer `status` with `message`.
pub fn error_response(status: StatusCode, message: &str) -> Response {
    (
        status,
        Json(ErrorBody {
            error: message.to_string(),
            code: None,
        }),
    )
        .into_response()
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut resp = (
            self.status,
            Json(ErrorBody {
                error: self.message,
                code: self.code.map(str::to_string),
            }),
        )
            .into_response();
        if let Some(secs) = self.retry_after {
            resp.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        resp
    }
}

impl From<memory::StoreError> for ApiError {
    fn from(e: memory::StoreError) -> Self {
        use memory::write::WriteRefusal;
        use memory::StoreError;
        match e {
            StoreError::NotFound(what) => ApiError::not_found(format!("{what} not found")),
            StoreError::Refused(why) => ApiError::bad_request(why),
            // The write path refused the text: over the cap is a bad request
            // (as the schema says); a credential or an instruction for the
            // model is well-formed but never kept.
            e @ StoreError::Write {
                refusal: WriteRefusal::TooLong { .. } | WriteRefusal::Empty,
                ..
            } => ApiError::bad_request(e.to_string()),
            e @ StoreError::Write { .. } => {
                ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, e.to_string())
            }
            other => ApiError::unavailable(&other),
        }
    }
}

impl From<memory::role_memory::RoleError> for ApiError {
    /// A role refusal: its status (403, 409, 410, 422, 404) and its code.
    fn from(e: memory::role_memory::RoleError) -> Self {
        use memory::role_memory::RoleError;
        match e {
            RoleError::Store(e) => ApiError::from(e),
            e => ApiError {
                code: Some(e.code()),
                ..ApiError::new(
                    StatusCode::from_u16(e.http_status())
                        .unwrap_or(StatusCode::UNPROCESSABLE_ENTITY),
                    e.to_string(),
                )
            },
        }
    }
}

impl From<pairing::PairingError> for ApiError {
    fn from(e: pairing::PairingError) -> Self {
        use pairing::PairingError as P;
        match e {
            P::Store(s) => s.into(),
            e @ (P::UnknownCode(_)
            | P::UnknownUser(_)
            | P::UnknownApiKey(_)
            | P::NotDelegated { .. }) => ApiError::not_found(e.to_string()),
            e @ (P::CodeExpired(_)
            | P::CodeNotPending { .. }
            | P::UserNotActive(_)
            | P::ApiKeyRevoked(_)
            | P::AlreadyPaired { .. }
            | P::BuiltInAdmin) => ApiError::conflict(e.to_string()),
            e @ (P::BadIdentity(_) | P::SelfDelegation(_)) => ApiError::bad_request(e.to_string()),
        }
    }
}

impl From<steward_core::error::TurnError> for ApiError {
    fn from(e: steward_core::error::TurnError) -> Self {
        use steward_core::error::TurnError as T;
        match e {
            T::Store(s) => s.into(),
            T::Pairing(p) => p.into(),
        }
    }
}

impl From<steward_core::export::ExportError> for ApiError {
    fn from(e: steward_core::export::ExportError) -> Self {
        use steward_core::export::ExportError as X;
        match e {
            X::Turn(t) => t.into(),
            X::Store(s) => s.into(),
            io @ (X::Io { .. } | X::Skill(_)) => {
                tracing::error!(error = %io, "export failed");
                ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "the export failed")
            }
        }
    }
}
