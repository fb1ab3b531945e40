//! The REST API v1 (SPEC §10, §16): everything the CLI and the dashboard do,
//! over the same services (`turns.lifecycle()`, `turns.pairing()`,
//! `memory::Db`), as JSON under `/api/v1`. One module per resource; `wire.rs`
//! the extractors, pages and times; `auth.rs` who is calling.
//!
//! Architecture Invariant: a key carries its user's role, from the pairing
//! store (`Pairing::api_key_user`), never from the request. A user's key
//! reaches its own memory (`/api/v1/me/…`), a search of what its turns may
//! read, and `POST /api/v1/messages`; everything else needs an admin's key
//! (403). Every route and its types are declared once, with `utoipa`, and the
//! OpenAPI 3.1 document at `/api/v1/openapi.json` is generated from them, so
//! the document and the router cannot drift.

mod archives;
mod audit;
mod auth;
mod error;
mod keys;
mod me;
mod memory;
mod messages;
mod pairing;
mod policy;
mod review;
mod revisions;
mod wire;

pub use auth::ADMIN_ONLY;
pub use error::{error_response, ApiError, ErrorBody};

use crate::clock::GovernorClock;
use crate::turn::TurnLoop;
use axum::extract::State;
use axum::http::{header, HeaderValue};
use axum::middleware::map_response;
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use std::sync::Arc;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::OpenApi as Document;
use utoipa::{Modify, OpenApi};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// What every API handler is given.
#[derive(Clone)]
pub struct ApiState {
    turns: Arc<TurnLoop>,
    limits: Arc<auth::KeyLimits>,
    /// The OpenAPI document, generated once.
    document: Arc<Document>,
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "steward REST API",
        description = "Everything the CLI and the dashboard do, as JSON. Authenticate with `Authorization: Bearer <API key>` (`steward api-key create --user ID`). A key carries its user's role: a user's key reaches its own memory under /api/v1/me, a search, and messages; the rest needs an admin's key. Errors are `{\"error\": \"...\"}`. Lists are pages: pass a page's `next` as `cursor`."
    ),
    modifiers(&Bearer),
    security(("bearer" = [])),
    tags(
        (name = "messages", description = "Talking to the agent"),
        (name = "me", description = "Your own user and memory (any key)"),
        (name = "memory", description = "Memory records (admin)"),
        (name = "pairing", description = "Pairing requests and paired users (admin)"),
        (name = "keys", description = "API keys (admin)"),
        (name = "revisions", description = "Revisions and undo (admin)"),
        (name = "review", description = "The review queue of quarantined records (admin)"),
        (name = "policy", description = "Org-wide policy memory (admin)"),
        (name = "archives", description = "Session archives and relearning (admin)"),
        (name = "audit", description = "The audit log (admin)"),
    )
)]
struct ApiDoc;

/// The bearer security scheme every operation but the document itself uses.
struct Bearer;

impl Modify for Bearer {
    fn modify(&self, doc: &mut Document) {
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some("An API key: `steward api-key create --user ID`"))
                    .build(),
            ),
        );
    }
}

/// Every route of the API with its documentation: the one list of both.
fn api() -> OpenApiRouter<ApiState> {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(openapi_json))
        .routes(routes!(messages::post_message))
        .routes(routes!(me::whoami))
        .routes(routes!(me::memory))
        .routes(routes!(me::show, me::forget))
        .routes(routes!(me::export))
        .routes(routes!(me::search))
        .routes(routes!(memory::list))
        .routes(routes!(memory::show, memory::forget))
        .routes(routes!(memory::export))
        .routes(routes!(pairing::requests))
        .routes(routes!(pairing::approve))
        .routes(routes!(pairing::deny))
        .routes(routes!(pairing::users, pairing::add))
        .routes(routes!(pairing::set_role))
        .routes(routes!(pairing::revoke))
        .routes(routes!(pairing::link))
        .routes(routes!(keys::list, keys::create))
        .routes(routes!(keys::revoke))
        .routes(routes!(revisions::list))
        .routes(routes!(revisions::undo))
        .routes(routes!(revisions::undo_run))
        .routes(routes!(review::list))
        .routes(routes!(review::confirm))
        .routes(routes!(review::reject))
        .routes(routes!(policy::list, policy::add))
        .routes(routes!(policy::retire))
        .routes(routes!(archives::list))
        .routes(routes!(archives::show))
        .routes(routes!(archives::relearn))
        .routes(routes!(audit::list))
}

/// The OpenAPI 3.1 document of the API, as served at `/api/v1/openapi.json`.
pub fn openapi() -> Document {
    api().into_openapi()
}

/// The API's routes on `turns`, for any outer router: they carry their own state.
pub fn router<S>(turns: &Arc<TurnLoop>) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    let (router, document) = api().split_for_parts();
    let state = ApiState {
        turns: turns.clone(),
        limits: Arc::new(auth::KeyLimits::new(
            &turns.config().rate_limit,
            GovernorClock(turns.clock().clone()),
        )),
        document: Arc::new(document),
    };
    router.layer(map_response(json_errors)).with_state(state)
}

/// The API's own document.
#[utoipa::path(get, operation_id = "openapi_json", path = "/api/v1/openapi.json", tag = "meta", security(()),
    responses((status = 200, description = "This OpenAPI 3.1 document", content_type = "application/json")))]
async fn openapi_json(State(state): State<ApiState>) -> Response {
    Json(state.document.as_ref()).into_response()
}

/// Any error answer not already JSON (axum's 405, a rejection) becomes
/// `{"error": "..."}` with the same status and headers.
async fn json_errors(resp: Response) -> Response {
    let status = resp.status();
    let is_json = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if status.is_success() || status.is_redirection() || is_json {
        return resp;
    }
    let (mut parts, _) = resp.into_parts();
    let reason = status.canonical_reason().unwrap_or("error").to_lowercase();
    let json = error_response(status, &reason);
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Response::from_parts(parts, json.into_body())
}

/// `GET /api/v1/...` with no such route: a JSON 404, for the app's fallback.
pub async fn not_found() -> Response {
    error_response(
        axum::http::StatusCode::NOT_FOUND,
        "no such route; GET /api/v1/openapi.json lists them",
    )
}
