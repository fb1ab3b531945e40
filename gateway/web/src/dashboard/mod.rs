//! The web dashboard (docs/channels.md, "The web dashboard"), served by the same axum
//! server under `/dashboard`: sign-in (the built-in admin with its token,
//! each paired person through the identity provider, `oidc`), each person's
//! own memory (`me`) and chat, and for administrators pairing
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
//! reaches the turn loop as an [`adapters::Inbound`] from the signed-in
//! person on channel `dashboard`, whose authority the pairing store resolves
//! like anyone's; every page and action is authorized for that person's role
//! now, and audited under their stored id.
//! Personal memory is shown only on a person's page, and opening it is
//! audited (`memory.view`).

mod audit;
mod auth;
mod chat;
mod link;
mod me;
mod memory;
mod oidc;
mod own_keys;
mod pairing;
mod review;
mod revisions;
mod roles;
mod runs;
mod settings;
mod signin;
mod skills;
mod tools;
mod view;

pub use auth::{
    ensure_admin_token, ensure_admin_user, reset_admin_token, AdminToken, Screen, SignedIn,
    Submitted,
};
pub use signin::TOO_MANY_ATTEMPTS;

use ::memory::authz::Action;
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::map_response;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post, MethodRouter};
use axum::Extension;
use axum::Router;
use channels::runs::Runner;
use std::sync::Arc;
use steward_core::clock::Clock;
use steward_core::config::Config;
use steward_core::lifecycle::Lifecycle;
use steward_core::services::Services;
use steward_core::turn::TurnLoop;

/// The stored user id the dashboard chats as: a paired admin of its own
/// (`auth::ensure_admin_user`), for whoever holds the admin token.
pub use ::pairing::BUILT_IN_ADMIN;
pub use channels::dashboard_chat::CHAT_CONVERSATION;
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
    skills: Arc<steward_core::skills::Skills>,
    /// Skills run now, and a run's lines.
    runner: Runner,
    /// Sign-in attempts per client and in all.
    sign_in: Arc<signin::SignInLimits>,
    /// Sign-in through each identity provider configured (`[oidc]`,
    /// `[[oidc.providers]]`), in the sign-in page's order.
    oidc: Arc<Vec<oidc::Configured>>,
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
            oidc: Arc::new(oidc::configure(&cfg.oidc, services.clock())),
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

    /// The sign-in page's "Sign in with …" buttons: each identity provider
    /// configured and usable.
    fn oidc_buttons(&self) -> Vec<signin::ProviderButton> {
        self.oidc
            .iter()
            .filter(|c| c.usable())
            .map(|c| signin::ProviderButton {
                id: c.button_id(),
                href: c.start_url(),
                name: c.name.clone(),
            })
            .collect()
    }

    /// The time now, from the injected clock.
    fn now_ms(&self) -> i64 {
        self.clock.now_ms()
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
    Turn(#[from] steward_core::turn::TurnError),
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

/// Who may open a dashboard route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteAccess {
    /// The pages before sign-in: the sign-in form and the stylesheet.
    BeforeSignIn,
    /// A signed-in person whom the one authorization point
    /// (`memory::authz::authorize`) allows this action.
    SignedIn(Action),
}

/// Every dashboard route with who may open it: the router is built from this
/// list, so no route exists without its row.
// One row per route: splitting the table would let a route exist apart from
// its access row, which is what the table is for.
#[allow(clippy::too_many_lines)]
fn routes() -> Vec<(&'static str, RouteAccess, MethodRouter<DashboardState>)> {
    use Action as A;
    use RouteAccess::{BeforeSignIn as Open, SignedIn as Needs};
    vec![
        ("/dashboard", Open, get(home)),
        ("/dashboard/", Open, get(home)),
        ("/dashboard/static/style.css", Open, get(style)),
        (
            "/dashboard/login",
            Open,
            get(signin::page).post(signin::login),
        ),
        ("/dashboard/oidc/start", Open, get(oidc::start)),
        (
            "/web/sign-in/{token}",
            Open,
            get(link::page).post(link::sign_in),
        ),
        (oidc::CALLBACK_PATH, Open, get(oidc::callback)),
        ("/dashboard/logout", Needs(A::SignOut), post(signin::logout)),
        ("/dashboard/me", Needs(A::OwnMemory), get(me::page)),
        (
            "/dashboard/me/forget",
            Needs(A::OwnMemory),
            post(me::forget),
        ),
        (
            "/dashboard/me/promote",
            Needs(A::OwnMemory),
            post(me::promote),
        ),
        ("/dashboard/me/share", Needs(A::RoleWork), post(me::share)),
        (me::QUESTION_PATH, Needs(A::OwnMemory), post(me::question)),
        ("/dashboard/me/keys", Needs(A::OwnKeys), get(own_keys::page)),
        (
            "/dashboard/me/keys/create",
            Needs(A::OwnKeys),
            post(own_keys::create),
        ),
        (
            "/dashboard/me/keys/revoke",
            Needs(A::OwnKeys),
            post(own_keys::revoke),
        ),
        (
            "/dashboard/me/delegates/add",
            Needs(A::OwnDelegations),
            post(own_keys::delegate_add),
        ),
        (
            "/dashboard/me/delegates/remove",
            Needs(A::OwnDelegations),
            post(own_keys::delegate_remove),
        ),
        (
            "/dashboard/chat",
            Needs(A::Converse),
            get(chat::page).post(chat::send),
        ),
        (
            "/dashboard/chat/answer",
            Needs(A::Converse),
            post(chat::answer),
        ),
        (
            "/dashboard/pairing",
            Needs(A::ManagePeople),
            get(pairing::page),
        ),
        (
            "/dashboard/pairing/approve",
            Needs(A::ManagePeople),
            post(pairing::approve),
        ),
        (
            "/dashboard/pairing/deny",
            Needs(A::ManagePeople),
            post(pairing::deny),
        ),
        (
            "/dashboard/pairing/add",
            Needs(A::ManagePeople),
            post(pairing::add),
        ),
        (
            "/dashboard/users/role",
            Needs(A::ManagePeople),
            post(pairing::set_role),
        ),
        (
            "/dashboard/users/revoke",
            Needs(A::ManagePeople),
            post(pairing::revoke),
        ),
        (
            "/dashboard/delegates/add",
            Needs(A::ManagePeople),
            post(pairing::delegate_add),
        ),
        (
            "/dashboard/delegates/remove",
            Needs(A::ManagePeople),
            post(pairing::delegate_remove),
        ),
        ("/dashboard/roles", Needs(A::ManageRoles), get(roles::page)),
        (
            "/dashboard/roles/add",
            Needs(A::ManageRoles),
            post(roles::add),
        ),
        (
            "/dashboard/roles/remove",
            Needs(A::ManageRoles),
            post(roles::remove),
        ),
        (
            "/dashboard/roles/grant",
            Needs(A::ManageRoles),
            post(roles::grant),
        ),
        (
            "/dashboard/roles/ungrant",
            Needs(A::ManageRoles),
            post(roles::ungrant),
        ),
        (
            "/dashboard/roles/retire",
            Needs(A::RoleWork),
            post(roles::retire),
        ),
        (
            "/dashboard/roles/propose",
            Needs(A::RoleWork),
            post(roles::propose),
        ),
        (
            "/dashboard/roles/accept",
            Needs(A::CurateRoleMemory),
            post(roles::accept),
        ),
        (
            "/dashboard/roles/confirm",
            Needs(A::CurateRoleMemory),
            post(roles::confirm),
        ),
        ("/dashboard/memory", Needs(A::Administer), get(memory::page)),
        (
            "/dashboard/memory/person",
            Needs(A::Oversee),
            post(memory::person),
        ),
        (
            "/dashboard/review",
            Needs(A::ReviewLearned),
            get(review::page),
        ),
        (
            "/dashboard/review/confirm",
            Needs(A::ReviewLearned),
            post(review::confirm),
        ),
        (
            "/dashboard/review/reject",
            Needs(A::ReviewLearned),
            post(review::reject),
        ),
        (
            "/dashboard/revisions",
            Needs(A::Administer),
            get(revisions::page),
        ),
        (
            "/dashboard/revisions/undo",
            Needs(A::Maintain),
            post(revisions::undo),
        ),
        (
            "/dashboard/revisions/forget",
            Needs(A::Maintain),
            post(revisions::forget),
        ),
        ("/dashboard/tools", Needs(A::CurateTools), get(tools::page)),
        (
            "/dashboard/tools/approve",
            Needs(A::CurateTools),
            post(tools::approve),
        ),
        (
            "/dashboard/tools/reject",
            Needs(A::CurateTools),
            post(tools::reject),
        ),
        (
            "/dashboard/tools/suspend",
            Needs(A::CurateTools),
            post(tools::suspend),
        ),
        (
            "/dashboard/skills",
            Needs(A::CurateSkills),
            get(skills::page),
        ),
        (
            "/dashboard/skills/approve",
            Needs(A::CurateSkills),
            post(skills::approve),
        ),
        (
            "/dashboard/skills/reject",
            Needs(A::CurateSkills),
            post(skills::reject),
        ),
        (
            "/dashboard/skills/rollback",
            Needs(A::CurateSkills),
            post(skills::rollback),
        ),
        (
            "/dashboard/skills/run",
            Needs(A::Operate),
            post(runs::run_now),
        ),
        (
            "/dashboard/skills/{skill_id}",
            Needs(A::CurateSkills),
            get(skills::history),
        ),
        ("/dashboard/runs", Needs(A::Operate), get(runs::page)),
        ("/dashboard/runs/{id}", Needs(A::Operate), get(runs::show)),
        ("/dashboard/audit", Needs(A::Operate), get(audit::page)),
        (
            "/dashboard/settings",
            Needs(A::Administer),
            get(settings::page),
        ),
    ]
}

/// Every dashboard route's path and who may open it (the authorization
/// table's rows for the dashboard).
pub fn route_access() -> Vec<(&'static str, RouteAccess)> {
    routes()
        .into_iter()
        .map(|(path, access, _)| (path, access))
        .collect()
}

/// The dashboard's routes (none when `dashboard.enabled = false`); the
/// server gives them their [`DashboardState`]. A signed-in route carries its
/// action, which [`Screen`] asks the authorization point about.
pub fn router(cfg: &Config) -> Router<DashboardState> {
    if !cfg.dashboard.enabled {
        return Router::new();
    }
    routes()
        .into_iter()
        .fold(Router::new(), |router, (path, access, methods)| {
            let methods = match access {
                RouteAccess::BeforeSignIn => methods,
                RouteAccess::SignedIn(action) => methods.layer(Extension(action)),
            };
            router.route(path, methods)
        })
        .layer(map_response(security_headers))
}

/// Every routed POST path, for tests that try each one without a CSRF token.
pub const FORM_ROUTES: &[&str] = &[
    "/dashboard/logout",
    "/dashboard/me/forget",
    "/dashboard/me/promote",
    "/dashboard/me/share",
    "/dashboard/me/question",
    "/dashboard/me/keys/create",
    "/dashboard/me/keys/revoke",
    "/dashboard/me/delegates/add",
    "/dashboard/me/delegates/remove",
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
    "/dashboard/revisions/forget",
    "/dashboard/skills/approve",
    "/dashboard/skills/reject",
    "/dashboard/skills/rollback",
    "/dashboard/skills/run",
    "/dashboard/tools/approve",
    "/dashboard/tools/reject",
    "/dashboard/tools/suspend",
    "/dashboard/memory/person",
];

/// Where `/dashboard` leads: an administrator to the chat, anyone else
/// signed in to their own memory, and a stranger to sign in.
async fn home(
    axum::extract::State(state): axum::extract::State<DashboardState>,
    jar: axum_extra::extract::CookieJar,
) -> Response {
    match SignedIn::signed_in(&jar, &state).await {
        Ok(who) if who.user.role == ::memory::Role::Admin => Redirect::to(view::CHAT.path),
        Ok(_) => Redirect::to(view::ME.path),
        Err(to_sign_in) => return to_sign_in,
    }
    .into_response()
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
