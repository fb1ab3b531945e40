//! The sign-in page, signing in with the admin token (attempts limited per
//! client and in all), and signing out.

use super::auth::{self, SignIn, Submitted};
use super::{view, DashboardState, Page};
use axum::extract::connect_info::ConnectInfo;
use axum::extract::{FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Redirect};
use axum::Form;
use axum_extra::extract::CookieJar;
use governor::clock::Clock as _;
use governor::middleware::NoOpMiddleware;
use governor::nanos::Nanos;
use governor::state::keyed::DashMapStateStore;
use governor::state::{InMemoryState, NotKeyed};
use governor::{Quota, RateLimiter};
use maud::html;
use serde::Deserialize;
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::num::NonZeroU32;
use std::sync::Arc;
use steward_core::clock::{Clock, GovernorClock};

/// What a client over the limit is told; its token is not looked at.
pub const TOO_MANY_ATTEMPTS: &str =
    "Too many sign-in attempts; wait a minute and try again. Nothing was checked.";

/// Clients remembered before the limiter forgets those back to a full allowance.
const CLIENTS_KEPT: usize = 4096;

/// Who is signing in, for the limiter: the peer's IP address when the server
/// was started with connect info (`steward serve` is), an IPv6 address by
/// its /64; `None` (one shared allowance) otherwise. No header is trusted: behind
/// a proxy every client is the proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct Peer(Option<IpAddr>);

impl<S: Send + Sync> FromRequestParts<S> for Peer {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Infallible> {
        let ip = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|ConnectInfo(addr)| match addr.ip() {
                IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                    Some(v4) => IpAddr::V4(v4),
                    None => {
                        let net = u128::from(v6) & (u128::MAX << 64);
                        IpAddr::V6(net.into())
                    }
                },
                v4 => v4,
            });
        Ok(Peer(ip))
    }
}

impl std::fmt::Display for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(ip) => write!(f, "{ip}"),
            None => f.write_str("unknown client"),
        }
    }
}

type ClientLimiter =
    RateLimiter<Peer, DashMapStateStore<Peer>, GovernorClock, NoOpMiddleware<Nanos>>;
type GlobalLimiter = RateLimiter<NotKeyed, InMemoryState, GovernorClock, NoOpMiddleware<Nanos>>;

/// Sign-in attempts allowed per client and in all (`dashboard.sign_in_per_minute`,
/// `dashboard.sign_in_global_per_minute`), right or wrong. In-process: each
/// replica limits the attempts it receives.
pub(super) struct SignInLimits {
    clock: GovernorClock,
    per_client: ClientLimiter,
    global: GlobalLimiter,
}

fn per_minute(n: u32) -> Quota {
    Quota::per_minute(NonZeroU32::new(n).unwrap_or(NonZeroU32::MIN))
}

impl SignInLimits {
    pub(super) fn new(per_client: u32, global: u32, clock: Arc<dyn Clock>) -> Self {
        let clock = GovernorClock(clock);
        SignInLimits {
            per_client: RateLimiter::dashmap_with_clock(per_minute(per_client), clock.clone()),
            global: RateLimiter::direct_with_clock(per_minute(global), clock.clone()),
            clock,
        }
    }

    /// Spend one attempt of `peer`'s (then one of everyone's): `Err` with the
    /// seconds to wait when either allowance is used up. The client's own
    /// allowance goes first, so one client past its limit spends nothing of
    /// the others'.
    pub(super) fn check(&self, peer: Peer) -> Result<(), u64> {
        if self.per_client.len() > CLIENTS_KEPT {
            self.per_client.retain_recent();
        }
        let refused = self
            .per_client
            .check_key(&peer)
            .err()
            .or_else(|| self.global.check().err());
        match refused {
            None => Ok(()),
            Some(until) => {
                let wait = until.wait_time_from(self.clock.now());
                Err(wait.as_secs().saturating_add(1))
            }
        }
    }
}

/// A "Sign in with …" button: its element id, where it goes, what it names.
pub(super) struct ProviderButton {
    pub(super) id: String,
    pub(super) href: String,
    pub(super) name: String,
}

/// The sign-in form, with what went wrong the last time, and a button for
/// each identity provider configured.
fn template(error: Option<&str>, providers: &[ProviderButton]) -> Html<String> {
    Html(
        view::bare(
            "Sign in",
            html! {
                div.card.signin {
                    h1 { "Sign in" }
                    @for p in providers {
                        p { a.button.primary id=(p.id) href=(p.href) { "Sign in with " (p.name) } }
                    }
                    @if !providers.is_empty() {
                        p.muted { "Sign in as yourself with the account you use with steward in chat. Administrators may also use the admin token:" }
                    }
                    p.muted {
                        "Use the admin token that " code { "steward serve" }
                        " printed when it generated one, or the " code { "dashboard.admin_token" }
                        " you configured."
                    }
                    @if let Some(e) = error {
                        div.flash.err id="flash" role="alert" { (e) }
                    }
                    form method="post" action="/dashboard/login" {
                        label for="token" { "Admin token" }
                        input id="token" name="token" type="password" autocomplete="current-password" required autofocus;
                        button.primary type="submit" { "Sign in" }
                    }
                }
            },
        )
        .into_string(),
    )
}

pub(super) async fn page(State(state): State<DashboardState>) -> Html<String> {
    template(None, &state.oidc_buttons())
}

#[derive(Debug, Deserialize)]
pub(super) struct LoginForm {
    #[serde(default)]
    token: String,
}

pub(super) async fn login(
    State(state): State<DashboardState>,
    peer: Peer,
    Form(f): Form<LoginForm>,
) -> Page {
    if let Err(wait) = state.sign_in.check(peer) {
        tracing::warn!(client = %peer, "dashboard sign-in refused unchecked: too many attempts");
        return Ok((
            StatusCode::TOO_MANY_REQUESTS,
            [(header::RETRY_AFTER, wait.to_string())],
            template(Some(TOO_MANY_ATTEMPTS), &state.oidc_buttons()),
        )
            .into_response());
    }
    Ok(match auth::sign_in(&state, &f.token).await? {
        SignIn::Ok(cookie) => (CookieJar::new().add(cookie), Redirect::to(view::CHAT.path)).into_response(),
        SignIn::Refused => {
            tracing::warn!("dashboard sign-in refused: wrong admin token");
            (
                StatusCode::UNAUTHORIZED,
                template(Some("That is not the admin token."), &state.oidc_buttons()),
            )
                .into_response()
        }
        SignIn::NoToken => (
            StatusCode::UNAUTHORIZED,
            template(
                Some("No admin token exists yet: start the server with `steward serve` (it prints one) or set dashboard.admin_token."),
                &state.oidc_buttons(),
            ),
        )
            .into_response(),
    })
}

#[derive(Debug, Deserialize)]
pub(super) struct NoFields {}

pub(super) async fn logout(
    Submitted {
        state, who, jar, ..
    }: Submitted<NoFields>,
) -> Page {
    state
        .db()
        .identity()
        .delete_dashboard_session(state.org(), &who.session.id_hash)
        .await?;
    let gone = auth::session_cookie(String::new(), false);
    Ok((jar.remove(gone), Redirect::to("/dashboard/login")).into_response())
}
