//! The REST API v1 (docs/api.md, "REST API"): everything the CLI and the dashboard do,
//! over the same services (`Lifecycle`, `Pairing`, `memory::Db`, taken from
//! `steward_core::services::Services` into [`ApiState`]), as JSON under `/api/v1`. One module per resource; `wire.rs`
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
mod delegates;
mod keys;
mod me;
mod memory;
mod messages;
mod pairing;
mod policy;
mod review;
mod revisions;
mod roles;
mod runs;
mod search;
mod skills;
mod tools;
mod wire;

pub use crate::error::{error_response, ApiError, ErrorBody};
pub use auth::ADMIN_ONLY;

use axum::extract::State;
use axum::http::{header, HeaderValue};
use axum::middleware::map_response;
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use channels::runs::Runner;
use std::sync::Arc;
use steward_core::clock::{Clock, GovernorClock};
use steward_core::config::Config;
use steward_core::export::Export;
use steward_core::learning::Learning;
use steward_core::lifecycle::Lifecycle;
use steward_core::services::Services;
use steward_core::skills::Skills;
use steward_core::turn::TurnLoop;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::OpenApi as Document;
use utoipa::{Modify, OpenApi};
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouter};
use utoipa_axum::routes;

/// What the API's handlers reach through their caller (`auth::Caller`): the
/// services they call, the per-key limits and the document.
#[derive(Clone)]
pub struct ApiState {
    cfg: Arc<Config>,
    clock: Arc<dyn Clock>,
    db: ::memory::Db,
    pairing: ::pairing::Pairing,
    learning: Arc<Learning>,
    lifecycle: Arc<Lifecycle>,
    export: Arc<Export>,
    /// Skill curation: approve, reject, roll back.
    skills: Arc<Skills>,
    /// `POST /api/v1/messages`.
    turns: Arc<TurnLoop>,
    /// Skills run on demand, and a run's lines.
    runner: Runner,
    limits: Arc<auth::KeyLimits>,
    /// The OpenAPI document, generated once.
    document: Arc<Document>,
}

impl ApiState {
    /// The API's state on `services`, with its own per-key limits.
    pub fn new(services: &Services) -> ApiState {
        ApiState {
            cfg: services.config().clone(),
            clock: services.clock().clone(),
            db: services.db().clone(),
            pairing: services.pairing().clone(),
            learning: services.learning().clone(),
            lifecycle: services.lifecycle().clone(),
            export: services.export().clone(),
            skills: services.skills().clone(),
            turns: services.turns().clone(),
            runner: Runner::new(services),
            limits: Arc::new(auth::KeyLimits::new(
                &services.config().rate_limit,
                GovernorClock(services.clock().clone()),
            )),
            document: Arc::new(parts().1),
        }
    }
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
        (name = "tools", description = "External tools (MCP): listings, approval for roles, rejection, suspension (admin)"),
        (name = "skills", description = "Skills: review, approval, rejection, rollback, and running one now (admin)"),
        (name = "runs", description = "Automated runs: schedules, webhooks and skills run on demand (admin)"),
        (name = "audit", description = "The audit log (admin)"),
        (name = "roles", description = "Work roles and role_memory.manage grants (admin)"),
        (name = "role_memory", description = "A role's memory, curated by two people: its holders, its managers and administrators (each route says who)"),
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
fn routes() -> Vec<UtoipaMethodRouter<ApiState>> {
    vec![
        routes!(openapi_json),
        routes!(messages::post_message),
        routes!(me::whoami),
        routes!(me::memory),
        routes!(me::show, me::forget),
        routes!(me::promote),
        routes!(me::settings, me::set_settings),
        routes!(me::export),
        routes!(me::search),
        routes!(delegates::list, delegates::add),
        routes!(delegates::remove),
        routes!(memory::list),
        routes!(search::search),
        routes!(memory::show, memory::forget),
        routes!(pairing::requests),
        routes!(pairing::approve),
        routes!(pairing::deny),
        routes!(pairing::users, pairing::add),
        routes!(pairing::set_role),
        routes!(pairing::revoke),
        routes!(pairing::link),
        routes!(keys::own_list, keys::own_create),
        routes!(keys::own_revoke),
        routes!(keys::list, keys::create),
        routes!(keys::revoke),
        routes!(revisions::list),
        routes!(revisions::undo),
        routes!(revisions::undo_run),
        routes!(review::list),
        routes!(review::confirm),
        routes!(review::reject),
        routes!(policy::list, policy::add),
        routes!(policy::retire),
        routes!(archives::list),
        routes!(archives::show),
        routes!(archives::relearn),
        routes!(skills::list),
        routes!(skills::show),
        routes!(skills::approve),
        routes!(skills::reject),
        routes!(skills::rollback),
        routes!(skills::run),
        routes!(tools::list),
        routes!(tools::show),
        routes!(tools::approve),
        routes!(tools::reject),
        routes!(tools::suspend),
        routes!(runs::list),
        routes!(runs::show),
        routes!(audit::list),
        routes!(roles::roles, roles::add_role),
        routes!(roles::remove_role),
        routes!(roles::grant),
        routes!(roles::ungrant),
        routes!(roles::list, roles::propose),
        routes!(roles::accept),
        routes!(roles::confirm),
        routes!(roles::edit),
        routes!(roles::retire),
    ]
}

fn api() -> OpenApiRouter<ApiState> {
    routes().into_iter().fold(
        OpenApiRouter::with_openapi(ApiDoc::openapi()),
        OpenApiRouter::routes,
    )
}

/// Every component schema each route gives, by name, as its own handler's
/// types give it (a name comes once per route that uses it). The document
/// keeps one schema a name, so two types under one name would document one
/// with the other's body: `tests/tests/api_contract.rs` checks none do.
pub fn route_schemas() -> Vec<(String, serde_json::Value)> {
    routes()
        .into_iter()
        .flat_map(|(schemas, _, _)| schemas)
        .map(|(name, schema)| (name, serde_json::to_value(schema).unwrap_or_default()))
        .collect()
}

/// The router and its document, with the answers every keyed operation may give.
fn parts() -> (Router<ApiState>, Document) {
    let (router, mut document) = api().split_for_parts();
    common_errors(&mut document);
    (router, document)
}

/// 400, 401, 429 (with `Retry-After`) and 503 on every operation that takes a
/// key, as the extractors give them before any handler runs; 403 on every
/// admin operation, 404 on every one that names a thing in its path.
fn common_errors(doc: &mut Document) {
    use utoipa::openapi::content::Content;
    use utoipa::openapi::header::Header;
    use utoipa::openapi::response::ResponseBuilder;
    use utoipa::openapi::schema::{Ref, Type};
    use utoipa::openapi::ObjectBuilder;
    let error = |description: &str| {
        ResponseBuilder::new().description(description).content(
            "application/json",
            Content::new(Some(Ref::from_schema_name("ErrorBody"))),
        )
    };
    let seconds = ObjectBuilder::new()
        .schema_type(Type::Integer)
        .minimum(Some(1));
    let answers = [
        ("400", error("Bad input: the reason is said").build()),
        (
            "401",
            error("No key, or one that is unknown or revoked").build(),
        ),
        (
            "429",
            error("Over this key's rate; retry after `Retry-After` seconds")
                .header("Retry-After", Header::new(seconds))
                .build(),
        ),
        (
            "503",
            error("The database did not answer; nothing was changed").build(),
        ),
    ];
    let admin_only = error("Needs an admin's key").build();
    let not_found = error("No such thing (or not yours)").build();
    for (path, item) in doc.paths.paths.iter_mut() {
        let ops = [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
            &mut item.patch,
        ];
        for op in ops.into_iter().flatten() {
            if op.operation_id.as_deref() == Some("openapi_json") {
                continue;
            }
            let own = op
                .tags
                .iter()
                .flatten()
                .any(|t| t == "me" || t == "messages" || t == "role_memory");
            let by_id = path.contains('{');
            let more = [
                (!own).then_some(("403", &admin_only)),
                by_id.then_some(("404", &not_found)),
            ];
            for (status, answer) in answers
                .iter()
                .map(|(s, a)| (*s, a))
                .chain(more.into_iter().flatten())
            {
                op.responses
                    .responses
                    .entry(status.to_string())
                    .or_insert_with(|| answer.clone().into());
            }
        }
    }
}

/// The OpenAPI 3.1 document of the API, as served at `/api/v1/openapi.json`.
pub fn openapi() -> Document {
    parts().1
}

/// The API's routes; `http::app` gives them their [`ApiState`].
pub fn router() -> Router<ApiState> {
    parts().0.layer(map_response(json_errors))
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
