//! The web dashboard (docs/channels.md, "The web dashboard"), served by the same axum
//! server under `/dashboard`: admin sign-in, chat as the built-in `admin`, pairing
//! requests and paired users, the memory browser, the review queue of
//! quarantined records, revisions with undo, skills (approval bound to the
//! content shown, rollback, run now), automated runs with their lines, the
//! audit log, and the effective settings (secrets hidden).
//!
//! Server-rendered HTML (maud, escaped by construction) with one embedded
//! stylesheet and no JavaScript. Every state-changing request is a POST form
//! carrying its session's CSRF token ([`Submitted`]); sessions and the
//! generated admin token are database rows, so replicas share them.
//!
//! Architecture Invariant: like the other adapters, this module is the only
//! code that knows the dashboard's wire format (forms, cookies); its chat
//! reaches the turn loop as an [`adapters::Inbound`] from `admin` on channel
//! `dashboard`, whose authority the pairing store resolves like anyone's.
//! Personal memory is shown only on a person's page, and opening it is
//! audited (`memory.view`).

mod audit;
mod auth;
mod chat;
mod memory;
mod pairing;
mod review;
mod revisions;
mod roles;
mod runs;
mod settings;
mod signin;
mod skills;
mod view;

pub use auth::{
    ensure_admin_token, ensure_admin_user, reset_admin_token, AdminToken, Screen, SignedInAdmin,
    Submitted,
};
pub use signin::TOO_MANY_ATTEMPTS;

use crate::clock::Clock;
use crate::config::Config;
use crate::lifecycle::Lifecycle;
use crate::runs::Runner;
use crate::services::Services;
use crate::turn::TurnLoop;
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::map_response;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::Router;
use std::sync::Arc;

pub use crate::channels::dashboard_chat::CHAT_CONVERSATION;
/// The stored user id the dashboard chats as: a paired admin of its own
/// (`auth::ensure_admin_user`), for whoever holds the admin token.
pub use ::pairing::BUILT_IN_ADMIN;
/// The session cookie's name.
pub const SESSION_COOKIE: &str = "steward_session";

const STYLE: &str = include_str!("style.css");

/// What every dashboard handler is given: the services it shows and acts on.
#[derive(Clone)]
pub struct DashboardState {
    cfg: Arc<Config>,
    clock: Arc<dyn Clock>,
    db: ::memory::Db,
    pairing: ::pairing::Pairing,
    /// Review, undo and forget.
    lifecycle: Arc<Lifecycle>,
    /// The chat page's turns.
    turns: Arc<TurnLoop>,
    /// Approving, rejecting and rolling back skills.
    skills: Arc<crate::skills::Skills>,
    /// Skills run now, and a run's lines.
    runner: Runner,
    /// Sign-in attempts per client and in all.
    sign_in: Arc<signin::SignInLimits>,
}

impl DashboardState {
    /// The dashboard's state on `services`, with its own sign-in limiter.
    pub fn new(services: &Services) -> DashboardState {
        let cfg = services.config();
        DashboardState {
            sign_in: Arc::new(signin::SignInLimits::new(
                cfg.dashboard.sign_in_per_minute,
                cfg.dashboard.sign_in_global_per_minute,
                services.clock().clone(),
            )),
            cfg: cfg.clone(),
            clock: services.clock().clone(),
            db: services.db().clone(),
            pairing: services.pairing().clone(),
            lifecycle: services.lifecycle().clone(),
            turns: services.turns().clone(),
            skills: services.skills().clone(),
            runner: Runner::new(services),
        }
    }

    /// The organisation the dashboard shows (`server.org`).
    fn org(&self) -> &str {
        &self.cfg.server.org
    }

    fn db(&self) -> &::memory::Db {
        &self.db
    }

    fn pairing(&self) -> &::pairing::Pairing {
        &self.pairing
    }

    /// The time now, from the injected clock.
    fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }

    /// Who a change made from the dashboard is by: its built-in admin, in its
    /// organisation, now.
    fn act(&self) -> ::pairing::Act<'_> {
        ::pairing::Act {
            org: self.org(),
            actor: BUILT_IN_ADMIN,
            at: self.now_ms(),
        }
    }

    /// The records of the organisation that `filter` lets through, a page of
    /// them at most.
    async fn browse(
        &self,
        filter: &::memory::store::RecordFilter,
    ) -> Result<Vec<::memory::MemoryRecord>, ::memory::StoreError> {
        let records = self.db.records();
        records.browse_records(self.org(), filter, PAGE_ROWS).await
    }
}

/// What a page or an action answers.
type Page = Result<Response, DashError>;

/// Rows a list page shows at most.
const PAGE_ROWS: i64 = 200;

/// Why a dashboard page could not be served.
#[derive(Debug, thiserror::Error)]
pub enum DashError {
    #[error(transparent)]
    Store(#[from] ::memory::StoreError),
    #[error(transparent)]
    Pairing(#[from] ::pairing::PairingError),
    #[error(transparent)]
    Turn(#[from] crate::turn::TurnError),
}

impl IntoResponse for DashError {
    fn into_response(self) -> Response {
        tracing::error!(error = %self, "dashboard request failed");
        (
            StatusCode::SERVICE_UNAVAILABLE,
            view::message_page(
                "Unavailable",
                "The database did not answer, so nothing was shown or changed. Please try again shortly.",
            ),
        )
            .into_response()
    }
}

/// The dashboard's routes (none when `dashboard.enabled = false`); the
/// server gives them their [`DashboardState`].
pub fn router(cfg: &Config) -> Router<DashboardState> {
    if !cfg.dashboard.enabled {
        return Router::new();
    }
    Router::new()
        .route("/dashboard", get(home))
        .route("/dashboard/", get(home))
        .route("/dashboard/static/style.css", get(style))
        .route("/dashboard/login", get(signin::page).post(signin::login))
        .route("/dashboard/logout", post(signin::logout))
        .route("/dashboard/chat", get(chat::page).post(chat::send))
        .route("/dashboard/chat/answer", post(chat::answer))
        .route("/dashboard/pairing", get(pairing::page))
        .route("/dashboard/pairing/approve", post(pairing::approve))
        .route("/dashboard/pairing/deny", post(pairing::deny))
        .route("/dashboard/pairing/add", post(pairing::add))
        .route("/dashboard/users/role", post(pairing::set_role))
        .route("/dashboard/users/revoke", post(pairing::revoke))
        .route("/dashboard/delegates/add", post(pairing::delegate_add))
        .route(
            "/dashboard/delegates/remove",
            post(pairing::delegate_remove),
        )
        .route("/dashboard/roles", get(roles::page))
        .route("/dashboard/roles/add", post(roles::add))
        .route("/dashboard/roles/remove", post(roles::remove))
        .route("/dashboard/roles/grant", post(roles::grant))
        .route("/dashboard/roles/ungrant", post(roles::ungrant))
        .route("/dashboard/roles/retire", post(roles::retire))
        .route("/dashboard/roles/propose", post(roles::propose))
        .route("/dashboard/roles/accept", post(roles::accept))
        .route("/dashboard/roles/confirm", post(roles::confirm))
        .route("/dashboard/memory", get(memory::page))
        .route("/dashboard/memory/person", post(memory::person))
        .route("/dashboard/review", get(review::page))
        .route("/dashboard/review/confirm", post(review::confirm))
        .route("/dashboard/review/reject", post(review::reject))
        .route("/dashboard/revisions", get(revisions::page))
        .route("/dashboard/revisions/undo", post(revisions::undo))
        .route("/dashboard/revisions/forget", post(revisions::forget))
        .route("/dashboard/skills", get(skills::page))
        .route("/dashboard/skills/approve", post(skills::approve))
        .route("/dashboard/skills/reject", post(skills::reject))
        .route("/dashboard/skills/rollback", post(skills::rollback))
        .route("/dashboard/skills/run", post(runs::run_now))
        .route("/dashboard/skills/{skill_id}", get(skills::history))
        .route("/dashboard/runs", get(runs::page))
        .route("/dashboard/runs/{id}", get(runs::show))
        .route("/dashboard/audit", get(audit::page))
        .route("/dashboard/settings", get(settings::page))
        .layer(map_response(security_headers))
}

/// Every routed POST path, for tests that try each one without a CSRF token.
pub const FORM_ROUTES: &[&str] = &[
    "/dashboard/logout",
    "/dashboard/chat",
    "/dashboard/chat/answer",
    "/dashboard/pairing/approve",
    "/dashboard/pairing/deny",
    "/dashboard/pairing/add",
    "/dashboard/users/role",
    "/dashboard/users/revoke",
    "/dashboard/delegates/add",
    "/dashboard/delegates/remove",
    "/dashboard/roles/add",
    "/dashboard/roles/remove",
    "/dashboard/roles/grant",
    "/dashboard/roles/ungrant",
    "/dashboard/roles/retire",
    "/dashboard/roles/propose",
    "/dashboard/roles/accept",
    "/dashboard/roles/confirm",
    "/dashboard/review/confirm",
    "/dashboard/review/reject",
    "/dashboard/revisions/undo",
    "/dashboard/skills/approve",
    "/dashboard/skills/reject",
    "/dashboard/skills/rollback",
    "/dashboard/skills/run",
    "/dashboard/memory/person",
];

async fn home() -> Redirect {
    Redirect::to("/dashboard/chat")
}

async fn style() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/css; charset=utf-8"),
            (header::CACHE_CONTROL, "public, max-age=3600"),
        ],
        STYLE,
    )
        .into_response()
}

/// The page of a path nothing serves, for a browser: 404, in the dashboard's
/// look, with the dashboard's security headers.
pub fn not_found(path: &str) -> Response {
    let text =
        format!("Nothing is served at {path}. The dashboard's pages are in its navigation bar.");
    secure(
        (
            StatusCode::NOT_FOUND,
            view::message_page("Not found", &text),
        )
            .into_response(),
    )
}

async fn security_headers(resp: Response) -> Response {
    secure(resp)
}

/// No framing, no inline script or style, nothing cached, no referrer.
fn secure(mut resp: Response) -> Response {
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    if !h.contains_key(header::CACHE_CONTROL) {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    resp
}
