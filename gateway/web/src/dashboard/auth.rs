//! Sign-in: the admin token, sessions (rows shared by replicas), the session
//! cookie, and the CSRF token every state-changing form carries.
//!
//! A handler that takes [`Screen`] (every page) only runs for a signed-in
//! browser; one that takes [`Submitted`] (every action) additionally only
//! runs when the form's `csrf` field is its session's token — otherwise 403
//! and the handler (so any side effect) never runs.

use super::view::{self, Tab};
use super::{DashError, DashboardState, Page, BUILT_IN_ADMIN, SESSION_COOKIE};
use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum_extra::extract::cookie::{Cookie, SameSite};
use axum_extra::extract::CookieJar;
use maud::Markup;
use memory::authz::{authorize, Action, Actor};
use memory::store::DashboardSession;
use memory::{Db, Principal, Role, StoreError};
use rand::RngCore;
use serde::de::DeserializeOwned;
use sha2::{Digest, Sha256};
use steward_core::config::Config;
use steward_core::services::Services;
use subtle::ConstantTimeEq;

/// SHA-256 of `s`, hex.
pub(crate) fn hash(s: &str) -> String {
    hex::encode(Sha256::digest(s.as_bytes()))
}

/// `bytes` bytes from the operating system's generator, hex.
pub(crate) fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    rand::rngs::OsRng.fill_bytes(&mut buf);
    hex::encode(buf)
}

pub(crate) fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

/// Where the admin token comes from, as `steward serve` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AdminToken {
    /// `dashboard.admin_token` is set.
    Configured,
    /// Generated just now and stored (hashed): print it, it is not shown again.
    Generated(String),
    /// Generated earlier (by this or another replica) and stored.
    Stored,
}

fn new_token() -> String {
    format!("stwd_{}", random_hex(24))
}

/// Make sure an admin token exists: the configured one, or one generated and
/// stored in the database so every replica accepts it.
pub async fn ensure_admin_token(services: &Services) -> Result<AdminToken, StoreError> {
    if services.config().dashboard.admin_token.is_some() {
        return Ok(AdminToken::Configured);
    }
    let org = &services.config().server.org;
    let token = new_token();
    if services
        .db()
        .identity()
        .init_dashboard_token(org, &hash(&token), services.clock().now_ms())
        .await?
    {
        Ok(AdminToken::Generated(token))
    } else {
        Ok(AdminToken::Stored)
    }
}

/// Replace the stored admin token with a new one and end every session.
/// Returns the new token (to print). Has no effect on a configured token.
pub async fn reset_admin_token(services: &Services) -> Result<String, StoreError> {
    let org = &services.config().server.org;
    let token = new_token();
    services
        .db()
        .identity()
        .reset_dashboard_token(org, &hash(&token), services.clock().now_ms())
        .await?;
    services
        .db()
        .audit()
        .append(
            org,
            "cli",
            "dashboard.token_reset",
            "dashboard",
            &memory::admin_text::AdminText::empty(),
            services.clock().now_ms(),
        )
        .await?;
    Ok(token)
}

/// The hash a sign-in token must match: the configured token's, else the stored one's.
async fn expected_token_hash(cfg: &Config, db: &Db) -> Result<Option<String>, StoreError> {
    match &cfg.dashboard.admin_token {
        Some(t) => Ok(Some(hash(t.trim()))),
        None => db.identity().dashboard_token_hash(&cfg.server.org).await,
    }
}

/// The built-in `admin` user the dashboard chats as exists, active, with the admin role.
pub async fn ensure_admin_user(services: &Services) -> Result<(), DashError> {
    let org = &services.config().server.org;
    admin_user(services.pairing(), org, services.clock().now_ms()).await
}

/// [`ensure_admin_user`] in `org`, paired at `now` if it must be.
pub(crate) async fn admin_user(
    pairing: &::pairing::Pairing,
    org: &str,
    now: i64,
) -> Result<(), DashError> {
    let current = pairing.resolve(org, BUILT_IN_ADMIN).await?;
    if current.is_none_or(|u| u.role != Role::Admin) {
        pairing
            .add_user(
                org,
                BUILT_IN_ADMIN,
                "Dashboard admin",
                Role::Admin,
                "dashboard",
                now,
            )
            .await?;
    }
    Ok(())
}

/// The outcome of a sign-in attempt.
pub(crate) enum SignIn {
    /// The session cookie to set.
    Ok(Cookie<'static>),
    /// Wrong or empty token.
    Refused,
    /// No token configured and none generated yet.
    NoToken,
}

pub(crate) async fn sign_in(state: &DashboardState, token: &str) -> Result<SignIn, StoreError> {
    let Some(expected) = expected_token_hash(&state.cfg, state.db()).await? else {
        return Ok(SignIn::NoToken);
    };
    let token = token.trim();
    if token.is_empty() || !same(&hash(token), &expected) {
        return Ok(SignIn::Refused);
    }
    Ok(SignIn::Ok(
        open_session(state, BUILT_IN_ADMIN, &expected).await?,
    ))
}

/// A new session of `user_id` (signed in with the admin token of hash
/// `token_hash`, or `""` through the identity provider), and its cookie.
pub(crate) async fn open_session(
    state: &DashboardState,
    user_id: &str,
    token_hash: &str,
) -> Result<Cookie<'static>, StoreError> {
    let cfg = &state.cfg.dashboard;
    let id = random_hex(32);
    let now = state.now_ms();
    let hours = cfg.session_hours;
    state
        .db()
        .identity()
        .create_dashboard_session(&DashboardSession {
            org: state.org().to_string(),
            id_hash: hash(&id),
            csrf: random_hex(32),
            token_hash: token_hash.to_string(),
            user_id: user_id.to_string(),
            created_at: now,
            expires_at: now.saturating_add(hours.saturating_mul(3_600_000)),
        })
        .await?;
    Ok(session_cookie(id, cfg.secure_cookie))
}

/// `steward_session=…; HttpOnly; SameSite=Strict; Path=/dashboard` (and `Secure`).
/// A browser-session cookie: the server ends the session at its expiry anyway.
pub(crate) fn session_cookie(value: String, secure: bool) -> Cookie<'static> {
    Cookie::build((SESSION_COOKIE, value))
        .http_only(true)
        .same_site(SameSite::Strict)
        .path("/dashboard")
        .secure(secure)
        .build()
}

/// Not signed in: back to the sign-in page, whatever was asked.
fn to_sign_in() -> Response {
    Redirect::to("/dashboard/login").into_response()
}

/// A signed-in dashboard browser: its session and the paired person it is,
/// with the role the pairing store gives them now.
#[derive(Debug, Clone)]
pub struct SignedIn {
    pub session: DashboardSession,
    pub user: ::pairing::User,
}

impl SignedIn {
    /// The session's CSRF token, for the forms of a page.
    pub fn csrf(&self) -> &str {
        &self.session.csrf
    }

    /// The signed-in person's stored user id: what their actions are audited under.
    pub fn user_id(&self) -> &str {
        &self.user.user_id
    }

    /// The signed-in person as the authorization point sees them.
    pub fn principal(&self) -> Principal {
        Principal::Human {
            user_id: self.user.user_id.clone(),
            name: self.user.name.clone(),
            role: self.user.role,
        }
    }

    /// Who a change made now in `state`'s organisation is by: this person.
    pub fn act<'a>(&'a self, state: &'a DashboardState) -> ::pairing::Act<'a> {
        ::pairing::Act {
            org: state.org(),
            actor: self.user_id(),
            at: state.now_ms(),
        }
    }

    /// The browser whose `jar` holds the cookie of a live session of a
    /// person paired and active now; otherwise off to sign in. The built-in
    /// admin's session lives only as long as the admin token it signed in
    /// with; a person's as long as their pairing, with the role it has now.
    pub(super) async fn signed_in(
        jar: &CookieJar,
        state: &DashboardState,
    ) -> Result<SignedIn, Response> {
        let Some(id) = jar.get(SESSION_COOKIE).map(|c| c.value().to_string()) else {
            return Err(to_sign_in());
        };
        let unavailable = |e: DashError| e.into_response();
        let session = state
            .db()
            .identity()
            .dashboard_session(state.org(), &hash(&id), state.now_ms())
            .await
            .map_err(|e| unavailable(e.into()))?;
        let Some(session) = session else {
            return Err(to_sign_in());
        };
        if session.user_id == BUILT_IN_ADMIN {
            let expected = expected_token_hash(&state.cfg, state.db())
                .await
                .map_err(|e| unavailable(e.into()))?;
            if !expected.is_some_and(|h| same(&h, &session.token_hash)) {
                return Err(to_sign_in());
            }
            // Whoever holds the token is the built-in admin, paired as such.
            admin_user(state.pairing(), state.org(), state.now_ms())
                .await
                .map_err(unavailable)?;
        }
        let user = match state.pairing().user(state.org(), &session.user_id).await {
            Ok(u) if u.status == ::pairing::UserStatus::Active => u,
            Ok(_) | Err(::pairing::PairingError::UnknownUser(_)) => return Err(to_sign_in()),
            Err(e) => return Err(unavailable(e.into())),
        };
        Ok(SignedIn { session, user })
    }
}

/// A page request from a signed-in browser: the state the page reads, the
/// person whose session its forms carry, and the cookies holding the notice
/// the page shows.
pub struct Screen {
    pub state: DashboardState,
    pub who: SignedIn,
    pub jar: CookieJar,
}

impl FromRequestParts<DashboardState> for Screen {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &DashboardState,
    ) -> Result<Self, Self::Rejection> {
        let jar = CookieJar::from_headers(&parts.headers);
        let who = SignedIn::signed_in(&jar, state).await?;
        // The route's action (`super::routes`), asked of the one
        // authorization point for whoever signed in.
        let Some(action) = parts.extensions.get::<Action>().copied() else {
            return Err(forbidden(
                "This page takes no action the authorization table knows.",
            ));
        };
        if let Err(denial) = authorize(Actor::own(&who.principal()), action) {
            return Err(forbidden(&denial.to_string()));
        }
        Ok(Screen {
            state: state.clone(),
            who,
            jar,
        })
    }
}

impl Screen {
    /// The page `tab` showing `content` in the layout, its forms carrying the
    /// session's CSRF token, with (and clearing) the pending notice.
    pub fn show(self, tab: Tab, content: Markup) -> Page {
        Ok(view::render(
            self.jar,
            &view::Viewer {
                org: self.state.org(),
                csrf: self.who.csrf(),
                who: &self.who.user,
            },
            tab,
            content,
        ))
    }
}

/// A state-changing form from a signed-in browser whose `csrf` field is its
/// session's token (missing or wrong → 403 before the handler runs), with the
/// state it acts on and the cookies its outcome's notice goes into.
pub struct Submitted<T> {
    pub state: DashboardState,
    pub who: SignedIn,
    pub jar: CookieJar,
    pub form: T,
}

impl<T> Submitted<T> {
    /// Redirect to `to`, leaving `text` (an outcome if `ok`, else a refusal)
    /// as the next page's notice.
    pub fn done(self, ok: bool, text: impl Into<String>, to: &str) -> Page {
        Ok(view::done(self.jar, ok, text, to))
    }
}

impl<T> FromRequest<DashboardState> for Submitted<T>
where
    T: DeserializeOwned + Send,
{
    type Rejection = Response;

    async fn from_request(req: Request, state: &DashboardState) -> Result<Self, Self::Rejection> {
        let (mut parts, body) = req.into_parts();
        let page = Screen::from_request_parts(&mut parts, state).await?;
        let req = Request::from_parts(parts, body);
        let bytes = Bytes::from_request(req, state)
            .await
            .map_err(IntoResponse::into_response)?;
        let fields: Vec<(String, String)> = serde_urlencoded::from_bytes(&bytes)
            .map_err(|e| bad_form(&format!("malformed form: {e}")))?;
        let given = fields
            .iter()
            .find(|(k, _)| k == "csrf")
            .map(|(_, v)| v.as_str());
        match given {
            Some(t) if same(t, page.who.csrf()) => {}
            _ => {
                return Err((
                    StatusCode::FORBIDDEN,
                    view::message_page(
                        "Forbidden",
                        "This form is stale or did not come from the dashboard (missing or wrong CSRF token). Nothing was changed. Reload the page and try again.",
                    ),
                )
                    .into_response())
            }
        }
        let form = serde_urlencoded::from_bytes(&bytes)
            .map_err(|e| bad_form(&format!("malformed form: {e}")))?;
        Ok(Submitted {
            state: page.state,
            who: page.who,
            jar: page.jar,
            form,
        })
    }
}

fn forbidden(reason: &str) -> Response {
    (
        StatusCode::FORBIDDEN,
        view::message_page("Forbidden", reason),
    )
        .into_response()
}

fn bad_form(reason: &str) -> Response {
    (
        StatusCode::BAD_REQUEST,
        view::message_page("Bad request", reason),
    )
        .into_response()
}
